package org.switchml.protocol;

import java.util.Arrays;
import java.util.function.ToLongFunction;

/**
 * Drops counted per {@link DropReason}: one count per reason, immutable. Both the software switch and
 * a P4Runtime controller reading the P4 program's counters describe drops with it.
 */
public final class DropCounts {
    /** No drop of any reason. */
    public static final DropCounts ZERO = new DropCounts(new long[DropReason.values().length]);

    /** Indexed by {@link DropReason#ordinal()}, one cell per reason. */
    private final long[] byReason;

    private DropCounts(final long[] byReason) {
        this.byReason = byReason;
    }

    /** The counts {@code count} gives for each reason. */
    public static DropCounts of(final ToLongFunction<DropReason> count) {
        final DropReason[] reasons = DropReason.values();
        final long[] cells = new long[reasons.length];
        for (final DropReason r : reasons) {
            cells[r.ordinal()] = count.applyAsLong(r);
        }
        return new DropCounts(cells);
    }

    /** Drops counted for {@code reason}. */
    public long get(final DropReason reason) {
        return byReason[reason.ordinal()];
    }

    /** Drops of every reason. */
    public long total() {
        long t = 0;
        for (final long d : byReason) {
            t += d;
        }
        return t;
    }

    /** These counts plus {@code other}'s, reason by reason. */
    public DropCounts plus(final DropCounts other) {
        return of(r -> get(r) + other.get(r));
    }

    /** These counts less {@code other}'s, reason by reason (counts since {@code other} was taken). */
    public DropCounts minus(final DropCounts other) {
        return of(r -> get(r) - other.get(r));
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof DropCounts d && Arrays.equals(byReason, d.byReason);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(byReason);
    }

    /** The reasons with a count, in reason order, e.g. {@code {BAD_SECRET=2, STALE_SEQ=1}}. */
    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("{");
        for (final DropReason r : DropReason.values()) {
            if (get(r) != 0) {
                sb.append(sb.length() == 1 ? "" : ", ").append(r).append('=').append(get(r));
            }
        }
        return sb.append('}').toString();
    }
}

package org.switchml.dataplane;

import org.switchml.protocol.DropReason;

import java.util.EnumMap;
import java.util.Map;

/**
 * A snapshot of one job's counters, summed over the switch's lanes.
 *
 * @param packetsIn       contributions that passed validation (including retransmissions)
 * @param packetsOut      results sent (one per recipient)
 * @param retransmissions contributions recognised as retransmissions
 * @param drops           drops by reason
 */
public record JobCounters(long packetsIn, long packetsOut, long retransmissions, Map<DropReason, Long> drops) {

    public JobCounters {
        drops = Map.copyOf(drops);
    }

    /** Drops counted for {@code reason}. */
    public long drops(final DropReason reason) {
        return drops.getOrDefault(reason, 0L);
    }

    static JobCounters sum(final Iterable<long[]> raw) {
        long in = 0;
        long out = 0;
        long retx = 0;
        final long[] d = new long[DropReason.values().length];
        for (final long[] r : raw) {
            in += r[0];
            out += r[1];
            retx += r[2];
            for (int i = 0; i < d.length; i++) {
                d[i] += r[3 + i];
            }
        }
        final Map<DropReason, Long> drops = new EnumMap<>(DropReason.class);
        for (final DropReason reason : DropReason.values()) {
            drops.put(reason, d[reason.ordinal()]);
        }
        return new JobCounters(in, out, retx, drops);
    }
}

package org.switchml.protocol;

import java.util.Objects;

/**
 * A switch's switch-wide counters (the P4 program's {@code drop_reason}): cumulative, every job
 * included, outliving the jobs they counted.
 *
 * @param drops       drops by reason, every job included: MALFORMED and UNKNOWN_JOB are counted only here
 * @param notSwitchml traffic that was not SwitchML at all (drop_reason's cell after the last DropReason;
 *                    only the P4 switch sees such frames, so the software switch counts 0)
 */
public record SwitchCounters(DropCounts drops, long notSwitchml) implements CountsDrops {
    /** Nothing counted. */
    public static final SwitchCounters ZERO = new SwitchCounters(DropCounts.ZERO, 0);

    public SwitchCounters {
        Objects.requireNonNull(drops, "drops (DropCounts.ZERO for none)");
    }

    /** Every count plus {@code other}'s (e.g. over lanes). */
    public SwitchCounters plus(final SwitchCounters other) {
        return new SwitchCounters(drops.plus(other.drops), notSwitchml + other.notSwitchml);
    }

    /** Every count less {@code baseline}'s: what was counted since {@code baseline} was read. */
    public SwitchCounters minus(final SwitchCounters baseline) {
        return new SwitchCounters(drops.minus(baseline.drops), notSwitchml - baseline.notSwitchml);
    }
}

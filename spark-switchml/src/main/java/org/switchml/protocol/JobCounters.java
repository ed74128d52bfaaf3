package org.switchml.protocol;

import java.util.Objects;

/**
 * One job's counters, as a switch keeps them per job.
 *
 * <p>{@code packetsIn} is counted at a different step by the two sources: the software switch's own
 * reading ({@code SoftwareSwitch.counters}) counts the contributions that passed every check of
 * docs/protocol.md section 4 (steps 1-7); the P4 program, and so any read over P4Runtime on either
 * target, counts every well-formed packet of the job that carried its secret (steps 1-3), so it also
 * counts the job's drops of steps 4-7.
 *
 * @param packetsIn       the job's packets counted in (see above)
 * @param packetsOut      result datagrams sent: every RESULT copy and every RETRANSMIT_RESULT
 * @param retransmissions retransmissions seen (answered, or dropped as DUPLICATE_PENDING)
 * @param drops           the job's drops by reason (STALE_GENERATION .. DUPLICATE_PENDING, BAD_SECRET)
 */
public record JobCounters(long packetsIn, long packetsOut, long retransmissions, DropCounts drops)
        implements CountsDrops {
    /** Nothing counted. */
    public static final JobCounters ZERO = new JobCounters(0, 0, 0, DropCounts.ZERO);

    public JobCounters {
        Objects.requireNonNull(drops, "drops (DropCounts.ZERO for none)");
    }

    /** Every count of these counters plus {@code other}'s (e.g. over lanes, or over jobs). */
    public JobCounters plus(final JobCounters other) {
        return new JobCounters(
                packetsIn + other.packetsIn,
                packetsOut + other.packetsOut,
                retransmissions + other.retransmissions,
                drops.plus(other.drops));
    }

    /** Every count less {@code baseline}'s: what was counted since {@code baseline} was read. */
    public JobCounters minus(final JobCounters baseline) {
        return new JobCounters(
                packetsIn - baseline.packetsIn,
                packetsOut - baseline.packetsOut,
                retransmissions - baseline.retransmissions,
                drops.minus(baseline.drops));
    }
}

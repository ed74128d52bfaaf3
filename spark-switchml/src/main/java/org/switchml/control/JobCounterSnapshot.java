package org.switchml.control;

import org.switchml.protocol.DropReason;

import java.util.EnumMap;
import java.util.Map;

/**
 * One job's counters read from the switch over P4Runtime, counted from the job's registration (the
 * controller subtracts what the job's counter cells held then, since switch counters are never reset).
 * Meanings are the P4 program's (p4/README.md, "Counters"), on both targets.
 *
 * @param jobId           the job
 * @param jobIndex        the counter index it holds
 * @param packetsIn       SwitchML packets of the job that were well-formed and carried its secret (passed
 *                        steps 1-3)
 * @param packetsOut      result datagrams sent: every RESULT copy and every RETRANSMIT_RESULT
 * @param retransmissions retransmissions seen (answered, or dropped as DUPLICATE_PENDING)
 * @param drops           the job's drops by reason (STALE_GENERATION .. DUPLICATE_PENDING, BAD_SECRET)
 */
public record JobCounterSnapshot(int jobId, int jobIndex, long packetsIn, long packetsOut, long retransmissions,
                                 Map<DropReason, Long> drops) {

    public JobCounterSnapshot {
        // EnumMap: reason order when printed.
        drops = java.util.Collections.unmodifiableMap(drops.isEmpty() ? new EnumMap<>(DropReason.class) : new EnumMap<>(drops));
    }

    /** Drops of the job counted for {@code reason}. */
    public long drops(final DropReason reason) {
        return drops.getOrDefault(reason, 0L);
    }

    /** All drops of the job. */
    public long totalDrops() {
        return drops.values().stream().mapToLong(Long::longValue).sum();
    }
}

package org.switchml.control;

import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.Wire;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * {@code SwitchMLIngress.worker_table}: (job id, worker IPv4, worker UDP port) → {@code set_worker(rank,
 * 1 << rank)}, one entry per rank; a contribution from anywhere else is UNKNOWN_SENDER.
 */
final class WorkerTable {
    private final TableEntries entries;

    WorkerTable(final TableEntries entries) {
        this.entries = entries;
    }

    /** The job's worker_table entries, by rank. */
    List<TableEntry> entries(final RegisteredJob job) {
        final long jobId = Integer.toUnsignedLong(job.spec().jobId());
        return TableEntries.perRank(
                job,
                (r, w) -> entries.entry(
                        P4Names.WORKER_TABLE,
                        Map.of(
                                P4Names.F_JOB_ID,
                                jobId,
                                P4Names.F_SRC_ADDR,
                                TableEntries.ipv4(w),
                                P4Names.F_SRC_PORT,
                                (long) w.getPort()),
                        P4Names.SET_WORKER,
                        Map.of(P4Names.P_RANK, (long) r, P4Names.P_BITMAP_BIT, bitmapBit(r))));
    }

    /**
     * The rank's bit in the P4 program's 32-bit worker bitmap. Ranks beyond it run only on the software
     * switch, which keys its bitmap on the rank and ignores this value; 0 makes the P4 program drop them.
     */
    static long bitmapBit(final int rank) {
        return rank < Wire.P4_MAX_WORKERS ? 1L << rank : 0;
    }
}

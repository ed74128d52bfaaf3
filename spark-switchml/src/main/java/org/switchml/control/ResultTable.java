package org.switchml.control;

import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4Names;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * {@code SwitchMLEgress.result_table}: (job id, egress_rid = rank) → {@code set_result_dest(MAC, IPv4, UDP
 * port)}, where each multicast copy of a result is addressed to its worker.
 */
final class ResultTable {
    private final TableEntries entries;

    ResultTable(final TableEntries entries) {
        this.entries = entries;
    }

    /** The job's result_table entries, by rank; MAC 0 without attachments (the software switch). */
    List<TableEntry> entries(final RegisteredJob job) {
        final long jobId = Integer.toUnsignedLong(job.spec().jobId());
        return TableEntries.perRank(
                job,
                (r, w) -> entries.entry(
                        P4Names.RESULT_TABLE,
                        Map.of(P4Names.F_JOB_ID, jobId, P4Names.F_EGRESS_RID, (long) r),
                        P4Names.SET_RESULT_DEST,
                        Map.of(
                                P4Names.P_DST_MAC,
                                job.attachments().isEmpty()
                                        ? 0L
                                        : job.attachments().get(r).mac(),
                                P4Names.P_DST_IP,
                                TableEntries.ipv4(w),
                                P4Names.P_DST_PORT,
                                (long) w.getPort())));
    }
}

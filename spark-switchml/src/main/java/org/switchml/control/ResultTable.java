package org.switchml.control;

import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import p4.v1.P4RuntimeOuterClass.TableEntry;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
        final JobSpec s = job.spec();
        final List<TableEntry> out = new ArrayList<>();
        for (int r = 0; r < s.numWorkers(); r++) {
            final InetSocketAddress w = s.workers().get(r);
            final long mac = job.attachments().isEmpty() ? 0 : job.attachments().get(r).mac();
            out.add(entries.entry(P4Names.RESULT_TABLE,
                    Map.of(P4Names.F_JOB_ID, Integer.toUnsignedLong(s.jobId()), P4Names.F_EGRESS_RID, (long) r),
                    P4Names.SET_RESULT_DEST, Map.of(P4Names.P_DST_MAC, mac, P4Names.P_DST_IP, TableEntries.ipv4(w),
                            P4Names.P_DST_PORT, (long) w.getPort())));
        }
        return out;
    }
}

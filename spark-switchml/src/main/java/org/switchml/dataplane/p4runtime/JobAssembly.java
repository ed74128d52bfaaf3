package org.switchml.dataplane.p4runtime;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;

/**
 * Turns table entries into dataplane jobs: whenever a job_table entry and all its worker_table entries
 * exist, the job is assembled into a {@link JobSpec} and registered with the {@link SoftwareSwitch};
 * when they stop being complete, the job leaves the dataplane and its counts go to the counter cells of
 * its index. Called with the service's lock held.
 */
final class JobAssembly {
    /** A job registered with the dataplane and the counter index its set_job entry gave it. */
    record LiveJob(JobSpec spec, int jobIndex) {}

    private final SoftwareSwitch sw;
    private final ForwardingState forwarding;
    private final CounterEmulation counters;
    /** Jobs registered with the dataplane, by job id. */
    private final Map<Integer, LiveJob> live = new LinkedHashMap<>();

    JobAssembly(final SoftwareSwitch sw, final ForwardingState forwarding, final CounterEmulation counters) {
        this.sw = sw;
        this.forwarding = forwarding;
        this.counters = counters;
    }

    /**
     * Brings the dataplane in line with the tables for one job: registered when its job_table entry (with
     * set_job) and one worker_table entry per rank 0..n-1 exist, removed otherwise. Results go to the
     * workers' endpoints; result_table and the multicast group are kept for reads only (the software
     * switch sends each result to the endpoints it knows from the worker entries).
     */
    void reconcile(final P4InfoIndex p4, final int jobId) {
        final JobSpec desired;
        final int index;
        final StoredEntry je = forwarding.rows(p4, P4Names.JOB_TABLE).get(List.of(Integer.toUnsignedLong(jobId)));
        if (je != null && je.action().equals(P4Names.SET_JOB)) {
            final Map<String, Long> p = je.params();
            desired = assemble(p4, jobId, p);
            index = (int) (long) p.get(P4Names.P_JOB_INDEX);
        } else {
            desired = null;
            index = -1;
        }
        final LiveJob cur = live.get(jobId);
        if (cur != null && cur.spec().equals(desired) && cur.jobIndex() == index) {
            return;
        }
        if (cur != null) {
            counters.retire(cur.jobIndex(), sw.counters(jobId));
            live.remove(jobId);
            // The dataplane refuses another spec under the same (generation, secret); an operator's table
            // edit that keeps set_job as it was still gets a fresh job (as in the P4 program, the table wins).
            if (desired == null || desired.sameRegistration(cur.spec())) {
                sw.removeJob(jobId);
            }
        }
        if (desired != null) {
            sw.registerJob(desired); // replaces a previous attempt: every slot starts afresh
            live.put(jobId, new LiveJob(desired, index));
        }
    }

    private JobSpec assemble(final P4InfoIndex p4, final int jobId, final Map<String, Long> p) {
        final P4InfoIndex.Table wt = p4.table(P4Names.WORKER_TABLE);
        final int jobField = wt.fields().indexOf(wt.field(P4Names.F_JOB_ID));
        final int addrField = wt.fields().indexOf(wt.field(P4Names.F_SRC_ADDR));
        final int portField = wt.fields().indexOf(wt.field(P4Names.F_SRC_PORT));
        final int n = (int) (long) p.get(P4Names.P_NUM_WORKERS);
        final InetSocketAddress[] workers = new InetSocketAddress[n];
        for (final StoredEntry w : forwarding.rows(p4, P4Names.WORKER_TABLE).values()) {
            if (w.key().get(jobField) != Integer.toUnsignedLong(jobId)
                    || !w.action().equals(P4Names.SET_WORKER)) {
                continue;
            }
            final long rank = w.params().get(P4Names.P_RANK);
            if (rank >= n || workers[(int) rank] != null) {
                return null; // inconsistent: a rank outside the job, or twice; the job stays out
            }
            workers[(int) rank] = endpoint(w.key().get(addrField), w.key().get(portField));
        }
        for (final InetSocketAddress w : workers) {
            if (w == null) {
                return null; // not complete yet
            }
        }
        return new JobSpec(
                jobId,
                (int) (long) p.get(P4Names.P_GENERATION),
                (int) (long) p.get(P4Names.P_SECRET),
                (int) (long) p.get(P4Names.P_K),
                (int) (long) p.get(P4Names.P_POOL_SIZE),
                List.of(workers));
    }

    private static InetSocketAddress endpoint(final long ip, final long port) {
        try {
            return new InetSocketAddress(
                    InetAddress.getByAddress(
                            new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip}),
                    (int) port);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException("4-byte address rejected", e);
        }
    }

    /** Takes every job off the dataplane (a pipeline commit; the counters are reset with it). */
    void removeAll() {
        for (final int jobId : List.copyOf(live.keySet())) {
            sw.removeJob(jobId);
        }
        live.clear();
    }

    /** The jobs on the dataplane now. */
    Collection<LiveJob> live() {
        return live.values();
    }
}

package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.SwitchCounters;
import p4.v1.P4RuntimeOuterClass.CounterData;
import p4.v1.P4RuntimeOuterClass.CounterEntry;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.Index;
import p4.v1.P4RuntimeOuterClass.ReadResponse;

/**
 * The P4 program's counters (drop_reason, job_packets_in/out, job_retransmissions, job_drops), computed
 * from the software switch's own counters with the P4 program's meanings. Like P4 counters, the cells
 * of a job index outlive the jobs that used it, and only a pipeline commit resets them. Called with the
 * service's lock held.
 */
final class CounterEmulation {
    /** Drop reasons kept per job: all but the first two, which are switch-wide (as in the P4 program). */
    private static final Set<DropReason> JOB_REASONS =
            EnumSet.complementOf(EnumSet.of(DropReason.MALFORMED, DropReason.UNKNOWN_JOB));

    private final SoftwareSwitch sw;
    /** Counts of removed jobs, per job index. */
    private JobCounters[] retained = new JobCounters[0];

    private SwitchCounters switchBaseline = SwitchCounters.ZERO;

    CounterEmulation(final SoftwareSwitch sw) {
        this.sw = sw;
    }

    /** Every cell back to 0, sized for {@code p4} (a pipeline commit). */
    void reset(final P4InfoIndex p4) {
        retained = new JobCounters[(int) p4.counter(P4Names.JOB_PACKETS_IN).size()];
        Arrays.fill(retained, JobCounters.ZERO);
        switchBaseline = sw.traffic().counters();
    }

    /** Adds the counts of a job leaving the dataplane (null: none) to the cells of its index. */
    void retire(final int jobIndex, final JobCounters c) {
        if (c != null && jobIndex < retained.length) {
            retained[jobIndex] = retained[jobIndex].plus(c);
        }
    }

    /** Answers one CounterEntry read (all counters, or one; all cells, or one) from {@code cells}. */
    void read(
            final P4InfoIndex p4,
            final CounterEntry query,
            final Map<String, long[]> cells,
            final ReadResponse.Builder resp)
            throws Failure {
        final List<P4InfoIndex.Counter> which;
        if (query.getCounterId() == 0) {
            which = p4.counters();
        } else {
            final P4InfoIndex.Counter c = p4.counterById(query.getCounterId());
            if (c == null) {
                throw new Failure(
                        Status.Code.NOT_FOUND, "counter id " + query.getCounterId() + " is not in the P4Info");
            }
            which = List.of(c);
        }
        for (final P4InfoIndex.Counter c : which) {
            final long[] values = cells.getOrDefault(c.name(), new long[(int) c.size()]);
            long from = 0;
            long to = c.size();
            if (query.hasIndex()) {
                from = query.getIndex().getIndex();
                to = from + 1;
                if (from < 0 || from >= c.size()) {
                    throw new Failure(
                            Status.Code.INVALID_ARGUMENT,
                            "counter " + c.name() + ": index " + from + " outside 0.." + (c.size() - 1));
                }
            }
            for (long i = from; i < to; i++) {
                resp.addEntities(Entity.newBuilder()
                        .setCounterEntry(CounterEntry.newBuilder()
                                .setCounterId(c.id())
                                .setIndex(Index.newBuilder().setIndex(i))
                                .setData(CounterData.newBuilder().setPacketCount(values[(int) i]))));
            }
        }
    }

    /**
     * Every counter cell of switchml.p4, from the dataplane's counters: drop_reason[i] is DropReason i over
     * the switch and all jobs; job_packets_in counts, as the P4 program does, every well-formed packet of a
     * known job that carries the job's secret (the dataplane's packetsIn plus the job's drops of steps 4-7).
     */
    Map<String, long[]> cells(final P4InfoIndex p4, final Collection<JobAssembly.LiveJob> live) {
        final int jobs = retained.length;
        final JobCounters[] perIndex = retained.clone();
        for (final JobAssembly.LiveJob j : live) {
            final JobCounters c = sw.counters(j.spec().jobId());
            if (c != null && j.jobIndex() < jobs) {
                perIndex[j.jobIndex()] = perIndex[j.jobIndex()].plus(c);
            }
        }
        // drop_reason is the dataplane's own switch-wide count (it outlives jobs, like the P4 counter).
        final SwitchCounters now = sw.traffic().counters().minus(switchBaseline);
        final long[] dropReason = new long[(int) p4.counter(P4Names.DROP_REASON).size()];
        for (final DropReason r : DropReason.values()) {
            if (r.ordinal() < dropReason.length) {
                dropReason[r.ordinal()] = now.drops(r);
            }
        }
        final long stride = p4.counter(P4Names.JOB_DROPS).size() / Math.max(1, jobs);
        final long[] in = new long[jobs];
        final long[] out = new long[jobs];
        final long[] retx = new long[jobs];
        final long[] drops = new long[(int) p4.counter(P4Names.JOB_DROPS).size()];
        for (int i = 0; i < jobs; i++) {
            final JobCounters c = perIndex[i];
            in[i] = packetsInAsP4Counts(c);
            out[i] = c.packetsOut();
            retx[i] = c.retransmissions();
            for (final DropReason r : JOB_REASONS) {
                if (r.ordinal() < stride) {
                    drops[(int) (i * stride + r.ordinal())] = c.drops(r);
                }
            }
        }
        final Map<String, long[]> cells = new HashMap<>();
        cells.put(P4Names.DROP_REASON, dropReason);
        cells.put(P4Names.JOB_PACKETS_IN, in);
        cells.put(P4Names.JOB_PACKETS_OUT, out);
        cells.put(P4Names.JOB_RETRANSMISSIONS, retx);
        cells.put(P4Names.JOB_DROPS, drops);
        return cells;
    }

    /**
     * job_packets_in as the P4 program counts it: every packet that passed steps 1-3, so the dataplane's
     * packetsIn (steps 1-7 passed) plus the job's drops at steps 4-7.
     */
    private static long packetsInAsP4Counts(final JobCounters c) {
        return c.packetsIn()
                + c.drops(DropReason.STALE_GENERATION)
                + c.drops(DropReason.UNKNOWN_SENDER)
                + c.drops(DropReason.WRONG_K)
                + c.drops(DropReason.BAD_SLOT);
    }
}

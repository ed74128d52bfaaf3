package org.switchml.control;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.SwitchCounters;
import p4.v1.P4RuntimeOuterClass.CounterEntry;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.Index;
import p4.v1.P4RuntimeOuterClass.ReadResponse;

/**
 * Reads switchml.p4's counters: a job index's cells of job_packets_in, job_packets_out,
 * job_retransmissions and job_drops, the switch-wide drop_reason, or any counter by name.
 */
final class CounterReader {
    private final P4InfoIndex p4;
    private final P4RuntimeConnection connection;

    CounterReader(final P4InfoIndex p4, final P4RuntimeConnection connection) {
        this.p4 = p4;
        this.connection = connection;
    }

    /** The switch-wide drop counter, cumulative since the pipeline was committed. */
    SwitchCounters switchCounters() {
        final long[] cells = counter(P4Names.DROP_REASON);
        // drop_reason's index is the DropReason ordinal; NOT_SWITCHML_INDEX follows the last reason.
        return new SwitchCounters(
                DropCounts.of(r -> r.ordinal() < cells.length ? cells[r.ordinal()] : 0),
                P4Names.NOT_SWITCHML_INDEX < cells.length ? cells[P4Names.NOT_SWITCHML_INDEX] : 0);
    }

    /** Packet counts of every cell of the counter called {@code name} (a wildcard CounterEntry read). */
    long[] counter(final String name) {
        final P4InfoIndex.Counter c = p4.counter(name);
        final long[] out = new long[(int) c.size()];
        for (final ReadResponse r : connection.read(
                List.of(Entity.newBuilder()
                        .setCounterEntry(CounterEntry.newBuilder().setCounterId(c.id()))
                        .build()),
                "read counter " + c.name())) {
            for (final Entity e : r.getEntitiesList()) {
                final long i = e.getCounterEntry().getIndex().getIndex();
                if (i >= 0 && i < out.length) {
                    out[(int) i] = e.getCounterEntry().getData().getPacketCount();
                }
            }
        }
        return out;
    }

    /** Every job index's cells summed: the per-job counters of all jobs together. */
    JobCounters jobTotals() {
        final long[] drops = counter(P4Names.JOB_DROPS);
        final long cells = p4.counter(P4Names.JOB_PACKETS_IN).size();
        final int stride = (int) Math.max(1, drops.length / Math.max(1, cells));
        return new JobCounters(
                sum(counter(P4Names.JOB_PACKETS_IN)),
                sum(counter(P4Names.JOB_PACKETS_OUT)),
                sum(counter(P4Names.JOB_RETRANSMISSIONS)),
                DropCounts.of(r -> {
                    long n = 0;
                    for (int i = r.ordinal(); r.ordinal() < stride && i < drops.length; i += stride) {
                        n += drops[i];
                    }
                    return n;
                }));
    }

    private static long sum(final long[] cells) {
        long s = 0;
        for (final long c : cells) {
            s += c;
        }
        return s;
    }

    /** The cells of counter index {@code index} as they are now (never reset: callers subtract a baseline). */
    JobCounters jobCells(final int index) {
        final P4InfoIndex.Counter in = p4.counter(P4Names.JOB_PACKETS_IN);
        final P4InfoIndex.Counter out = p4.counter(P4Names.JOB_PACKETS_OUT);
        final P4InfoIndex.Counter retx = p4.counter(P4Names.JOB_RETRANSMISSIONS);
        final P4InfoIndex.Counter drops = p4.counter(P4Names.JOB_DROPS);
        final int stride = (int) (drops.size() / in.size());
        final List<Entity> ask = new ArrayList<>();
        ask.add(cell(in.id(), index));
        ask.add(cell(out.id(), index));
        ask.add(cell(retx.id(), index));
        for (int r = 0; r < stride; r++) {
            ask.add(cell(drops.id(), (long) index * stride + r));
        }
        final Map<String, Long> got = new HashMap<>();
        for (final ReadResponse resp : connection.read(ask, "read counters of job index " + index)) {
            for (final Entity e : resp.getEntitiesList()) {
                final CounterEntry c = e.getCounterEntry();
                got.put(
                        c.getCounterId() + "/" + c.getIndex().getIndex(),
                        c.getData().getPacketCount());
            }
        }
        // job_drops holds a stride of cells per job index, one per DropReason ordinal.
        final DropCounts jobDrops = DropCounts.of(r -> r.ordinal() < stride
                ? got.getOrDefault(drops.id() + "/" + ((long) index * stride + r.ordinal()), 0L)
                : 0);
        return new JobCounters(
                got.getOrDefault(in.id() + "/" + index, 0L),
                got.getOrDefault(out.id() + "/" + index, 0L),
                got.getOrDefault(retx.id() + "/" + index, 0L),
                jobDrops);
    }

    private static Entity cell(final int counterId, final long index) {
        return Entity.newBuilder()
                .setCounterEntry(CounterEntry.newBuilder()
                        .setCounterId(counterId)
                        .setIndex(Index.newBuilder().setIndex(index)))
                .build();
    }
}

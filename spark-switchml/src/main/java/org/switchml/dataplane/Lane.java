package org.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.SwitchCounters;
import org.switchml.protocol.Wire;
import org.switchml.transport.FaultPlan;
import org.switchml.transport.PacketSender;

/**
 * One dataplane thread: the handler of one lane's UDP socket. It owns the slots of every job that map
 * to this lane and runs the per-slot algorithm of docs/protocol.md section 4 on them, without locks:
 * job tables are changed only by tasks run on this same thread.
 */
final class Lane extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = Logger.getLogger(Lane.class.getName());

    private final int index;
    private final int lanes;
    private final boolean reflect;
    private final FaultPlan faults;
    private final Map<Integer, LaneJob> jobs = new HashMap<>();
    private PacketSender sender;
    private int[] scratch = new int[0];

    /** Datagrams handed to this lane: each one ends up accepted, dropped (by reason) or as an error. */
    long received;
    /** Contributions that changed slot state or were answered with a stored result. */
    long accepted;
    /** Drops by reason ordinal, every job included (jobs also count their own). */
    final long[] drops = new long[DropReason.values().length];

    long errors;

    Lane(final int index, final int lanes, final boolean reflect, final FaultPlan faults) {
        this.index = index;
        this.lanes = lanes;
        this.reflect = reflect;
        this.faults = faults;
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx) {
        sender = new PacketSender(ctx.channel(), faults);
        ctx.fireChannelActive();
    }

    void install(final JobSpec spec) {
        jobs.put(spec.jobId(), new LaneJob(spec, index, lanes));
    }

    boolean remove(final int jobId) {
        return jobs.remove(jobId) != null;
    }

    /** This lane's counters of the job, or null when it is not installed. */
    JobCounters counters(final int jobId) {
        final LaneJob job = jobs.get(jobId);
        return job == null ? null : job.counters();
    }

    /** This lane's switch-wide counts. */
    SwitchTraffic traffic() {
        return new SwitchTraffic(
                received, accepted, new SwitchCounters(DropCounts.of(r -> drops[r.ordinal()]), 0), errors);
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
        if (!(msg instanceof DatagramPacket)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        final DatagramPacket packet = (DatagramPacket) msg;
        received++;
        try {
            handle(ctx, packet.content(), packet.sender());
        } catch (final RuntimeException e) {
            // A bug must not stop the dataplane: count it, log the first few, keep serving.
            if (errors++ < 10) {
                LOG.log(Level.WARNING, "lane " + index + ": packet from " + packet.sender() + " raised", e);
            }
        } finally {
            packet.release();
        }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
        sender.flush();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
        if (errors++ < 10) {
            LOG.log(Level.WARNING, "lane " + index + ": socket error", cause);
        }
    }

    /**
     * The checks of docs/protocol.md section 4, in its order. The secret is checked right after the job
     * lookup: a packet without it is classified by nothing but its job id, and touches no slot state,
     * sends nothing and moves no counter of the job but BAD_SECRET.
     */
    private void handle(final ChannelHandlerContext ctx, final ByteBuf in, final InetSocketAddress from) {
        final int base = in.readerIndex();
        final int length = in.readableBytes();
        if (length < Wire.HEADER_LENGTH
                || Wire.version(in, base) != Wire.VERSION
                || Wire.kindCode(in, base) != Kind.CONTRIBUTION.code()
                || length != Wire.datagramLength(Wire.k(in, base))) {
            drops[DropReason.MALFORMED.ordinal()]++;
            return;
        }
        if (reflect) {
            final ByteBuf out = ctx.alloc().directBuffer(length);
            out.writeBytes(in, base, length);
            Wire.kind(out, 0, Kind.RESULT);
            sender.send(out, from);
            accepted++;
            return;
        }
        final LaneJob job = jobs.get(Wire.jobId(in, base));
        if (job == null) {
            drops[DropReason.UNKNOWN_JOB.ordinal()]++;
            return;
        }
        if (Wire.secret(in, base) != job.secret) {
            drop(job, DropReason.BAD_SECRET);
            return;
        }
        if (Wire.generation(in, base) != job.spec.generation()) {
            drop(job, DropReason.STALE_GENERATION);
            return;
        }
        final int rank = Wire.rank(in, base);
        if (rank >= job.numWorkers || !job.workers[rank].equals(from)) {
            drop(job, DropReason.UNKNOWN_SENDER);
            return;
        }
        if (Wire.k(in, base) != job.k) {
            drop(job, DropReason.WRONG_K);
            return;
        }
        final int slot = Wire.slot(in, base);
        if (slot >= job.poolSize || slot % lanes != index) {
            drop(job, DropReason.BAD_SLOT);
            return;
        }
        job.packetsIn++;
        if (aggregate(ctx, job, in, base, rank, slot, from)) {
            accepted++;
        }
    }

    private void drop(final LaneJob job, final DropReason reason) {
        job.drops[reason.ordinal()]++;
        drops[reason.ordinal()]++;
    }

    /** Step 7 and 8 for a packet that passed every check; returns false when it was dropped. */
    private boolean aggregate(
            final ChannelHandlerContext ctx,
            final LaneJob job,
            final ByteBuf in,
            final int base,
            final int rank,
            final int slot,
            final InetSocketAddress from) {
        final int set = Wire.set(in, base);
        final int i = job.index(slot, set);
        final int other = i ^ 1;
        final int q = Wire.seq(in, base);
        final int k = job.k;
        final int sumBase = i * k;
        final int payload = base + Wire.PAYLOAD_OFFSET;

        if (job.noContributor(i)) {
            if (job.used[i] && q - job.seq[i] <= 0) {
                drop(job, DropReason.STALE_SEQ);
                return false;
            }
            // First contributor of a fresh use overwrites: no explicit clearing of slot memory needed.
            job.startUse(i, rank);
            job.remove(other, rank);
            job.count[i] = 1;
            job.seq[i] = q;
            job.used[i] = true;
            job.exponent[i] = Wire.exponent(in, base);
            Wire.readInts(in, payload, job.sums, sumBase, k);
        } else if (q != job.seq[i]) {
            drop(job, DropReason.STALE_SEQ);
            return false;
        } else if (!job.contributed(i, rank)) {
            if (job.count[i] == job.numWorkers) {
                // The use is complete, and only moving on to the other set clears a sender's bit:
                // this is a delayed copy from a worker that already has the result. Adding it would
                // corrupt the stored result and the other set's bitmap.
                drop(job, DropReason.STALE_SEQ);
                return false;
            }
            job.add(i, rank);
            job.remove(other, rank);
            job.count[i]++;
            final short exp = Wire.exponent(in, base);
            if (exp > job.exponent[i]) {
                job.exponent[i] = exp;
            }
            final int[] add = scratch(k);
            Wire.readInts(in, payload, add, 0, k);
            final int[] sums = job.sums;
            for (int e = 0; e < k; e++) {
                sums[sumBase + e] += add[e];
            }
        } else {
            job.retransmissions++;
            if (job.count[i] == job.numWorkers) {
                sender.send(result(ctx, job, in, base, i, Kind.RETRANSMIT_RESULT), from);
                job.packetsOut++;
                return true;
            }
            drop(job, DropReason.DUPLICATE_PENDING);
            return false;
        }
        if (job.count[i] == job.numWorkers) {
            final ByteBuf out = result(ctx, job, in, base, i, Kind.RESULT);
            final int n = job.numWorkers;
            for (int r = 0; r < n; r++) {
                sender.send(r == n - 1 ? out : out.retainedDuplicate(), job.workers[r]);
            }
            job.packetsOut += n;
        }
        return true;
    }

    /** A reusable buffer of at least {@code k} ints (lane thread only). */
    private int[] scratch(final int k) {
        if (scratch.length < k) {
            scratch = new int[k];
        }
        return scratch;
    }

    /** A result datagram: the contribution's header with kind and exponent replaced, then the sums. */
    private static ByteBuf result(
            final ChannelHandlerContext ctx,
            final LaneJob job,
            final ByteBuf in,
            final int base,
            final int i,
            final Kind kind) {
        final int k = job.k;
        final ByteBuf out = ctx.alloc().directBuffer(Wire.datagramLength(k));
        out.writeBytes(in, base, Wire.HEADER_LENGTH);
        Wire.kind(out, 0, kind);
        Wire.exponent(out, 0, job.exponent[i]);
        Wire.writeInts(out, Wire.PAYLOAD_OFFSET, job.sums, i * k, k);
        out.writerIndex(Wire.datagramLength(k));
        return out;
    }
}

package org.switchml.client;

import io.netty.buffer.ByteBuf;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;
import org.switchml.protocol.Wire;

/**
 * One allreduce call of one worker: streams the vector through the job's slot pool, self-clocked by
 * results, sends again what its {@link Retransmission} policy says, and fails when no result comes for the result
 * timeout.
 *
 * <p>Confined to the worker socket's event loop, except {@link #future()}, {@link #lastProgressNanos()}
 * and {@link #cancel}. Several jobs may each have one operation running on the same socket; results are
 * routed by job id.
 */
final class AllReduceOperation {
    private final SwitchMLClient client;
    private final SwitchMLClient.Handler io;
    private final JobSession session;
    private final JobSpec spec;
    private final VectorCodec codec;
    private final long firstPacket;
    private final int blocks;
    private final int lookahead;
    private final int total;
    private final int poolSize;
    private final int k;
    private final int datagramLength;
    private final boolean scaled;
    private final short[] globalExponent;
    /** Where each lane's packets go, resolved once per call; its results must come from there. */
    private final InetSocketAddress[] lanes;

    private final BitSet sent;
    private final BitSet replied;
    private int repliedCount;
    /** When to send an outstanding packet again; made when the call starts. */
    private Retransmission retransmission;

    private final long resultTimeoutNs;
    private volatile long lastProgressNs = System.nanoTime();
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    AllReduceOperation(
            final SwitchMLClient client,
            final JobSession session,
            final VectorCodec codec,
            final long firstPacket,
            final long resultTimeoutMs) {
        this.client = client;
        this.io = client.handler();
        this.session = session;
        this.spec = session.spec();
        this.codec = codec;
        this.firstPacket = firstPacket;
        this.blocks = codec.blocks();
        this.poolSize = spec.poolSize();
        this.scaled = codec.encoding() != Encoding.INT32;
        this.lookahead = scaled ? Math.min(poolSize, blocks) : 0;
        this.total = blocks + lookahead;
        this.k = spec.k();
        this.datagramLength = Wire.datagramLength(k);
        this.globalExponent = new short[blocks];
        final List<InetSocketAddress> laneList = session.switchAddress().laneAddresses();
        this.lanes = laneList.toArray(new InetSocketAddress[0]);
        this.sent = new BitSet(total);
        this.replied = new BitSet(total);
        this.resultTimeoutNs = TimeUnit.MILLISECONDS.toNanos(resultTimeoutMs);
    }

    /** Packets this call sends (retransmissions not counted): blocks plus look-ahead. */
    int totalPackets() {
        return total;
    }

    CompletableFuture<Void> future() {
        return done;
    }

    long lastProgressNanos() {
        return lastProgressNs;
    }

    void start() {
        if (io.running(spec.jobId(), this)) {
            fail(new IllegalStateException(
                    session.describe() + ": another allreduce of this job is running on this socket"));
            return;
        }
        if (total == 0) {
            done.complete(null);
            return;
        }
        io.activate(spec.jobId(), this);
        lastProgressNs = System.nanoTime();
        retransmission = new Retransmission(
                poolSize,
                lanes.length,
                session.rtt(),
                io.firstResultWaits,
                io.link,
                (slot, lossDetected) -> {
                    if (lossDetected) {
                        io.countLossDetectedRetransmission();
                    } else {
                        io.countTimeoutRetransmission();
                    }
                    transmit(retransmission.outstanding(slot), slot);
                },
                lastProgressNs);
        for (int q = 0; q < Math.min(total, poolSize); q++) {
            trySend(q);
        }
        io.sender.flush();
        io.startTicking(this);
    }

    /** Whether {@code other} talks to the same switch (the same lanes) as this operation. */
    boolean sameSwitch(final AllReduceOperation other) {
        return Arrays.equals(lanes, other.lanes);
    }

    /**
     * Whether the datagram at {@code base} (at least a header long) comes from this operation's switch: its
     * source is the lane of the slot it names (the receive rule's sender check).
     */
    boolean fromItsSwitch(final ByteBuf buf, final int base, final InetSocketAddress from) {
        if (from == null || from.getAddress() == null) {
            return false;
        }
        final InetSocketAddress slotLane = lanes[Wire.slot(buf, base) % lanes.length];
        return from.getPort() == slotLane.getPort() && from.getAddress().equals(slotLane.getAddress());
    }

    /** Sends packet {@code q} if it is due: its slot's previous use and its look-ahead are answered. */
    private void trySend(final int q) {
        if (q >= total || sent.get(q)) {
            return;
        }
        if (scaled && q >= lookahead && !replied.get(q - lookahead)) {
            return;
        }
        if (q >= poolSize && !replied.get(q - poolSize)) {
            return;
        }
        sent.set(q);
        final int slot = Wire.slotOf(firstPacket + q, poolSize);
        retransmission.sent(slot, q, System.nanoTime());
        transmit(q, slot);
    }

    /** Writes packet {@code q} of {@code slot} to its lane (the caller flushes). */
    private void transmit(final int q, final int slot) {
        final long g = firstPacket + q;
        final short exponent;
        if (scaled) {
            exponent = q < blocks ? codec.localExponent(q) : Wire.EXPONENT_NONE;
        } else {
            exponent = Wire.EXPONENT_NONE;
        }
        final ByteBuf buf = client.allocate(datagramLength);
        Wire.writeHeader(
                buf,
                0,
                Kind.CONTRIBUTION,
                Wire.setOf(g, poolSize),
                codec.encoding(),
                k,
                spec.jobId(),
                spec.generation(),
                session.rank(),
                slot,
                exponent,
                (int) g,
                spec.secret());
        if (!scaled) {
            codec.encode(q, Wire.EXPONENT_NONE, buf, Wire.PAYLOAD_OFFSET);
        } else if (q >= lookahead) {
            final int block = q - lookahead;
            codec.encode(block, globalExponent[block], buf, Wire.PAYLOAD_OFFSET);
        } else {
            codec.encodeZeros(buf, Wire.PAYLOAD_OFFSET);
        }
        buf.writerIndex(datagramLength);
        io.sender.send(buf, lanes[slot % lanes.length]);
    }

    /**
     * Handles a datagram from {@code from} (docs/protocol.md, section 3, receive rule): it completes an
     * outstanding packet only when it is a result of this call from the switch's address and the port of its
     * slot's lane, with the job's secret and generation, and the slot and set of the packet it answers.
     */
    ResultOutcome onResult(final ByteBuf buf, final int base, final int length, final InetSocketAddress from) {
        if (done.isDone() || length != datagramLength || Wire.version(buf, base) != Wire.VERSION) {
            return ResultOutcome.IGNORED;
        }
        final int kind = Wire.kindCode(buf, base);
        if ((kind != Kind.RESULT.code() && kind != Kind.RETRANSMIT_RESULT.code())
                || Wire.jobId(buf, base) != spec.jobId()) {
            return ResultOutcome.IGNORED;
        }
        // Whoever learned the secret could otherwise answer first, with other values, and workers would
        // disagree. InetAddress.equals compares the int address of an IPv4 one: no allocation on this path.
        final InetSocketAddress slotLane = lanes[Wire.slot(buf, base) % lanes.length];
        final InetAddress ip = from == null ? null : from.getAddress();
        if (ip == null || from.getPort() != slotLane.getPort() || !ip.equals(slotLane.getAddress())) {
            return ResultOutcome.UNKNOWN_SENDER;
        }
        // The secret too: a result of another registration of this job (another session) never completes ours.
        if (Wire.secret(buf, base) != spec.secret()) {
            return ResultOutcome.BAD_SECRET;
        }
        if (Wire.generation(buf, base) != spec.generation()) {
            return ResultOutcome.OTHER_GENERATION;
        }
        if (Wire.k(buf, base) != k) {
            return ResultOutcome.IGNORED;
        }
        final long j = (Wire.seq(buf, base) - (int) firstPacket) & 0xFFFF_FFFFL;
        if (j >= total) {
            return ResultOutcome.IGNORED;
        }
        final int q = (int) j;
        final long g = firstPacket + q;
        final int slot = Wire.slot(buf, base);
        if (slot != Wire.slotOf(g, poolSize)
                || Wire.set(buf, base) != Wire.setOf(g, poolSize)
                || retransmission.outstanding(slot) != q) {
            return ResultOutcome.IGNORED;
        }
        try {
            accept(q, slot, buf, base);
        } catch (final RuntimeException e) {
            // The packet counts as answered but its values may not have reached the output: fail this call
            // rather than return a sum that may be wrong. The socket's other calls are not concerned.
            fail(new SwitchMLException(
                    session.describe() + ": cannot use the result of packet " + g + " from switch "
                            + from.getHostString() + ":" + from.getPort() + ": " + e,
                    e));
        }
        return ResultOutcome.ACCEPTED;
    }

    /** Completes outstanding packet {@code q} of {@code slot} with the result at {@code base}, and sends what it lets go. */
    private void accept(final int q, final int slot, final ByteBuf buf, final int base) {
        replied.set(q);
        repliedCount++;
        final long now = System.nanoTime();
        lastProgressNs = now;
        retransmission.answered(slot, now);
        final int payload = base + Wire.PAYLOAD_OFFSET;
        if (!scaled) {
            codec.decode(q, Wire.EXPONENT_NONE, buf, payload);
        } else {
            if (q < blocks) {
                globalExponent[q] = Wire.exponent(buf, base);
            }
            if (q >= lookahead) {
                final int block = q - lookahead;
                codec.decode(block, globalExponent[block], buf, payload);
            }
        }
        if (repliedCount == total) {
            finish();
            return;
        }
        if (scaled) {
            trySend(q + lookahead);
        }
        trySend(q + poolSize);
    }

    /** One tick of the socket's retransmission timer (every {@link Retransmission#TICK_NS}, while this call runs). */
    void tick() {
        if (done.isDone()) {
            return;
        }
        final long now = System.nanoTime();
        if (!retransmission.clockTicks(now)) {
            return; // the thread stood still: time out nothing for the stall
        }
        if (now - lastProgressNs > resultTimeoutNs) {
            if (!askBeforeTimeout) {
                timeout();
                return;
            }
            stalled = true; // the caller decides (off this thread) whether to wait on or give up
        }
        final long before = io.retransmissions();
        retransmission.retransmit(now);
        if (io.retransmissions() != before) {
            io.sender.flush();
        }
    }

    /** When set, a call without progress for the timeout is only marked {@link #stalled()}: the caller decides. */
    private volatile boolean askBeforeTimeout;

    private volatile boolean stalled;

    void askBeforeTimeout() {
        askBeforeTimeout = true;
    }

    /** Whether the call has had no progress for the timeout (only when the caller decides). */
    boolean stalled() {
        return stalled;
    }

    /** The caller says the silence is expected (e.g. another worker is still starting): wait another period. */
    void waitOn() {
        client.loop().execute(() -> {
            lastProgressNs = System.nanoTime();
            stalled = false;
        });
    }

    /** The caller gives up: fail with the timeout error, naming what is missing. */
    void giveUp() {
        client.loop().execute(() -> {
            if (!done.isDone()) {
                timeout();
            }
        });
    }

    private void timeout() {
        final int oldest = retransmission.oldestOutstanding();
        final int slot = oldest < 0 ? -1 : Wire.slotOf(firstPacket + oldest, poolSize);
        final InetSocketAddress to = slot < 0 ? lanes[0] : lanes[slot % lanes.length];
        fail(new SwitchMLTimeoutException(
                session.describe()
                        + ": no result for slot " + slot + " (packet " + (firstPacket + oldest) + ", " + repliedCount
                        + " of " + total + " packets of this call answered) from switch " + to.getHostString() + ":"
                        + to.getPort() + " within " + TimeUnit.NANOSECONDS.toMillis(resultTimeoutNs)
                        + " ms; are all " + spec.numWorkers()
                        + " workers running, and is this registration of the job still "
                        + "installed (registering the job again gives it a new secret and ends this session)?",
                slot));
    }

    private void finish() {
        stop();
        done.complete(null);
    }

    /** Fails the call (on the loop thread) with an error naming its job, rank and worker, and {@code why}. */
    void abort(final String why) {
        fail(new SwitchMLException(session.describe() + ": " + why));
    }

    /** Fails the call (on the loop thread). */
    void fail(final RuntimeException e) {
        stop();
        done.completeExceptionally(e);
    }

    /** Fails the call from any thread. */
    void cancel(final RuntimeException e) {
        client.loop().execute(() -> fail(e));
    }

    private void stop() {
        io.stopTicking(this);
        io.deactivate(spec.jobId(), this);
    }
}

package org.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.VectorCodec;
import org.switchml.protocol.Wire;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One allreduce call of one worker: streams the vector through the job's slot pool, self-clocked by
 * results, retransmits on timeout with backoff, and fails when no result comes for the result timeout.
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
    private final InetSocketAddress[] lanes;

    private final BitSet sent;
    private final BitSet replied;
    private int repliedCount;
    /** Per slot: the packet outstanding on it (-1 when none), its deadline and current timeout. */
    private final int[] outstanding;
    private final long[] deadlineNs;
    private final long[] timeoutNs;
    private final long[] firstSentNs;
    private final boolean[] resent;

    private final RttEstimator rtt;
    private final long maxTimeoutNs;
    private final long resultTimeoutNs;
    private volatile long lastProgressNs = System.nanoTime();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private ScheduledFuture<?> timer;

    AllReduceOperation(final SwitchMLClient client, final JobSession session, final VectorCodec codec,
                       final long firstPacket, final long resultTimeoutMs) {
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
        this.outstanding = new int[poolSize];
        Arrays.fill(outstanding, -1);
        this.deadlineNs = new long[poolSize];
        this.timeoutNs = new long[poolSize];
        this.firstSentNs = new long[poolSize];
        this.resent = new boolean[poolSize];
        final ClientOptions o = client.options();
        this.rtt = session.rtt();
        this.maxTimeoutNs = TimeUnit.MILLISECONDS.toNanos(o.maxRetransmitTimeoutMs());
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
        if (io.active.containsKey(spec.jobId())) {
            fail(new IllegalStateException(session.describe() + ": another allreduce of this job is running on this socket"));
            return;
        }
        if (total == 0) {
            done.complete(null);
            return;
        }
        io.active.put(spec.jobId(), this);
        lastProgressNs = System.nanoTime();
        for (int q = 0; q < Math.min(total, poolSize); q++) {
            trySend(q);
        }
        io.sender.flush();
        final long tickNs = TimeUnit.MILLISECONDS.toNanos(1);
        timer = client.loop().scheduleAtFixedRate(this::tick, tickNs, tickNs, TimeUnit.NANOSECONDS);
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
        outstanding[slot] = q;
        final long now = System.nanoTime();
        timeoutNs[slot] = rtt.rtoNs();
        deadlineNs[slot] = now + timeoutNs[slot];
        firstSentNs[slot] = now;
        resent[slot] = false;
        transmit(q, slot);
    }

    private void transmit(final int q, final int slot) {
        final long g = firstPacket + q;
        final short exponent;
        if (scaled) {
            exponent = q < blocks ? codec.localExponent(q) : Wire.EXPONENT_NONE;
        } else {
            exponent = Wire.EXPONENT_NONE;
        }
        final ByteBuf buf = client.allocate(datagramLength);
        Wire.writeHeader(buf, 0, Kind.CONTRIBUTION, Wire.setOf(g, poolSize), codec.encoding(), k, spec.jobId(),
                spec.generation(), session.rank(), slot, exponent, (int) g, spec.secret());
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

    /** Handles a datagram from the switch; returns whether it completed an outstanding packet. */
    boolean onResult(final ByteBuf buf, final int base, final int length) {
        if (done.isDone() || length != datagramLength || Wire.version(buf, base) != Wire.VERSION) {
            return false;
        }
        final int kind = Wire.kindCode(buf, base);
        if (kind != Kind.RESULT.code() && kind != Kind.RETRANSMIT_RESULT.code()) {
            return false;
        }
        // The secret too: a result of another registration of this job (another session) never completes ours.
        if (Wire.jobId(buf, base) != spec.jobId() || Wire.generation(buf, base) != spec.generation()
                || Wire.secret(buf, base) != spec.secret() || Wire.k(buf, base) != k) {
            return false;
        }
        final long j = (Wire.seq(buf, base) - (int) firstPacket) & 0xFFFF_FFFFL;
        if (j >= total) {
            return false;
        }
        final int q = (int) j;
        final long g = firstPacket + q;
        final int slot = Wire.slot(buf, base);
        if (slot != Wire.slotOf(g, poolSize) || Wire.set(buf, base) != Wire.setOf(g, poolSize)
                || outstanding[slot] != q) {
            return false;
        }
        outstanding[slot] = -1;
        replied.set(q);
        repliedCount++;
        final long now = System.nanoTime();
        lastProgressNs = now;
        if (!resent[slot]) {
            rtt.sample(now - firstSentNs[slot]);
        }
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
            return true;
        }
        if (scaled) {
            trySend(q + lookahead);
        }
        trySend(q + poolSize);
        return true;
    }

    private void tick() {
        if (done.isDone()) {
            return;
        }
        final long now = System.nanoTime();
        if (now - lastProgressNs > resultTimeoutNs) {
            if (!askBeforeTimeout) {
                timeout();
                return;
            }
            stalled = true; // the caller decides (off this thread) whether to wait on or give up
        }
        for (int slot = 0; slot < poolSize; slot++) {
            final int q = outstanding[slot];
            if (q >= 0 && now - deadlineNs[slot] >= 0) {
                timeoutNs[slot] = Math.min(maxTimeoutNs, timeoutNs[slot] * 2);
                deadlineNs[slot] = now + timeoutNs[slot];
                resent[slot] = true;
                io.retransmissions++;
                transmit(q, slot);
            }
        }
        io.sender.flush();
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
        int oldest = -1;
        for (int slot = 0; slot < poolSize; slot++) {
            final int q = outstanding[slot];
            if (q >= 0 && (oldest < 0 || q < oldest)) {
                oldest = q;
            }
        }
        final int slot = oldest < 0 ? -1 : Wire.slotOf(firstPacket + oldest, poolSize);
        final InetSocketAddress to = slot < 0 ? lanes[0] : lanes[slot % lanes.length];
        fail(new SwitchMLTimeoutException(session.describe() + " (worker " + client.localAddress()
                + "): no result for slot " + slot + " (packet " + (firstPacket + oldest) + ", " + repliedCount
                + " of " + total + " packets of this call answered) from switch " + to.getHostString() + ":"
                + to.getPort() + " within " + TimeUnit.NANOSECONDS.toMillis(resultTimeoutNs)
                + " ms; are all " + spec.numWorkers() + " workers running, and is this registration of the job still "
                + "installed (registering the job again gives it a new secret and ends this session)?", slot));
    }

    private void finish() {
        stop();
        done.complete(null);
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
        if (timer != null) {
            timer.cancel(false);
        }
        io.active.remove(spec.jobId(), this);
    }
}

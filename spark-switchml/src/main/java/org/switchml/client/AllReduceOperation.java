package org.switchml.client;

import io.netty.buffer.ByteBuf;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;
import org.switchml.protocol.Wire;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One allreduce call of one worker: streams the vector through the job's slot pool, self-clocked by
 * results, retransmits what is not answered within the retransmission timeout, and fails when no result
 * comes for the result timeout.
 *
 * <p>Loss recovery (docs/design.md, "Loss recovery") is driven by the window, in two ways:
 * <ul>
 *   <li><b>Loss detection by later results.</b> A lane of the switch answers in the order it receives.
 *   So when a packet sent to a lane <em>after</em> an outstanding one has been answered at its first
 *   transmission, and the outstanding one has waited that answer's round trip and a quarter more
 *   (allowance for reordering, and for a worker that is a little behind on that slot), it is presumed
 *   lost and sent again, whatever the timeout. Random loss in the middle of a window thus costs about one
 *   round trip, however long the timeout. Checked when results arrive and on every timer tick.</li>
 *   <li><b>A retransmission timeout</b> for what nothing later reveals (the tail of a call, a window that
 *   is all lost): one timeout for the whole window, from the session's measured round trips
 *   ({@link RttEstimator}). A packet's timeout runs from its transmission, and starts again whenever a
 *   packet sent before it is answered: it is waiting in a queue, not lost. It backs off (doubles, up to the
 *   ceiling) only <em>for the window</em> while no result at all arrives, i.e. on silence: the switch is
 *   gone, a worker is missing or the host stalls, and every retransmission would be wasted. Any result
 *   resets it, so random loss never grows it. A packet that times out {@value #RETRIES_PER_DOUBLING} times
 *   in a row while the rest of the window moves (a slot stuck on a broken lane, say) backs off on its own,
 *   one doubling per {@value #RETRIES_PER_DOUBLING}. A timer that fires late (the thread or the process
 *   stood still) times nothing out for the stall.</li>
 * </ul>
 * What keeps retransmissions from feeding on themselves: only packets answered at their first
 * transmission serve as references (a retransmission's result may answer an earlier copy, and in a queue
 * that would declare lost what is only waiting), so a packet presumed lost is presumed lost again only
 * after a packet first sent after its retransmission was answered; and the switch answers a duplicate
 * with at most the stored result to its sender, while a duplicate result here is dropped without reply.
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
    /** Retransmissions of one packet, in a row, per doubling of its own timeout. */
    static final int RETRIES_PER_DOUBLING = 4;
    /** Largest backoff exponent (2^16 x the timeout is past any ceiling). */
    private static final int MAX_EXPONENT = 16;

    /**
     * Per slot: the packet outstanding on it (-1 when none), when it was first sent and last sent, and
     * how often it was sent again.
     */
    private final int[] outstanding;
    private final long[] firstSentNs;
    private final long[] lastSentNs;
    /** Per slot: the call's transmission count at the outstanding packet's first and latest transmission. */
    private final long[] firstTx;
    private final long[] lastTx;
    /* The order in which datagrams entered the worker's link: the socket's transmission count (io.txCount), shared
       by every call on the socket, whose datagrams share the link. */
    private final int[] retries;
    /** Per slot: timeouts in a row of the outstanding packet (its own backoff). */
    private final int[] timeouts;

    /** Smallest extra wait before a packet overtaken by later results is presumed lost. */
    static final long REORDER_FLOOR_NS = 100_000;
    /**
     * Per lane: the first transmission time and round trip of the most recently sent packet that was
     * answered at its first transmission (the reference of loss detection), once there is one.
     */
    private final long[] laneSentNs;
    /**
     * Per lane: when its latest result came, and the transmission count at the first transmission of the
     * packet it answered (-1 before any result): progress of the queue, which restarts the timeout of every
     * packet sent behind that one.
     */
    private final long[] laneAnswerNs;
    private final long[] laneAnsweredTx;
    private final long[] laneRttNs;
    private final boolean[] laneKnown;
    /** No outstanding packet was last sent before this (exact after each loss scan, stale-low between). */
    private long oldestSentNs;
    private boolean anyOutstandingSent;

    private final RttEstimator rtt;
    private final long maxTimeoutNs;
    /** The window's backoff: retransmission rounds in a row without any result in between. */
    private final RoundsWithout silence = new RoundsWithout();
    /**
     * Retransmission rounds in a row with no round trip measured in between (no packet answered at its first
     * transmission): the timeout stays doubled that many times until one is (Karn). Results keep coming in a
     * retransmission storm, so {@link #silence} stays 0 there; what stops coming are first-transmission
     * answers, because every packet waits in the queue the copies made longer than the stale timeout.
     */
    private final RoundsWithout unmeasured = new RoundsWithout();

    /** Retransmission rounds in a row with no event of one kind in between: a backoff exponent. */
    private static final class RoundsWithout {
        private int rounds;
        private boolean seenSinceRound = true;

        /** The event happened: the count starts again. */
        void seen() {
            seenSinceRound = true;
            rounds = 0;
        }

        /** A retransmission round ended; it counts when the event did not happen since the previous one. */
        void round() {
            if (!seenSinceRound && rounds < MAX_EXPONENT) {
                rounds++;
            }
            seenSinceRound = false;
        }
    }

    private final long resultTimeoutNs;
    private volatile long lastProgressNs = System.nanoTime();
    private final CompletableFuture<Void> done = new CompletableFuture<>();

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
        this.firstSentNs = new long[poolSize];
        this.lastSentNs = new long[poolSize];
        this.firstTx = new long[poolSize];
        this.lastTx = new long[poolSize];
        this.laneAnswerNs = new long[lanes.length];
        this.laneAnsweredTx = new long[lanes.length];
        Arrays.fill(laneAnsweredTx, -1);
        this.retries = new int[poolSize];
        this.timeouts = new int[poolSize];
        this.laneSentNs = new long[lanes.length];
        this.laneRttNs = new long[lanes.length];
        this.laneKnown = new boolean[lanes.length];
        this.probed = new BitSet(total);
        this.probeOfLane = new int[lanes.length];
        this.probeStartOfLane = new long[lanes.length];
        this.rtt = session.rtt();
        this.maxTimeoutNs = rtt.maxNs();
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
            fail(new IllegalStateException(session.describe() + ": another allreduce of this job is running on this socket"));
            return;
        }
        if (total == 0) {
            done.complete(null);
            return;
        }
        io.activate(spec.jobId(), this);
        lastProgressNs = System.nanoTime();
        for (int q = 0; q < Math.min(total, poolSize); q++) {
            trySend(q);
        }
        io.sender.flush();
        lastTickNs = lastProgressNs;
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
        outstanding[slot] = q;
        final long now = System.nanoTime();
        firstSentNs[slot] = now;
        lastSentNs[slot] = now;
        retries[slot] = 0;
        timeouts[slot] = 0;
        firstTx[slot] = io.txCount;
        if (!anyOutstandingSent) {
            anyOutstandingSent = true;
            oldestSentNs = now;
        }
        transmit(q, slot);
    }

    private void transmit(final int q, final int slot) {
        lastTx[slot] = io.txCount++;
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
        if (slot != Wire.slotOf(g, poolSize) || Wire.set(buf, base) != Wire.setOf(g, poolSize)
                || outstanding[slot] != q) {
            return ResultOutcome.IGNORED;
        }
        try {
            accept(q, slot, buf, base);
        } catch (final RuntimeException e) {
            // The packet counts as answered but its values may not have reached the output: fail this call
            // rather than return a sum that may be wrong. The socket's other calls are not concerned.
            fail(new SwitchMLException(session.describe() + ": cannot use the result of packet " + g + " from switch "
                    + from.getHostString() + ":" + from.getPort() + ": " + e, e));
        }
        return ResultOutcome.ACCEPTED;
    }

    /** Completes outstanding packet {@code q} of {@code slot} with the result at {@code base}, and sends what it lets go. */
    private void accept(final int q, final int slot, final ByteBuf buf, final int base) {
        if (probed.get(q)) {
            probeAnswered = true;
        }
        outstanding[slot] = -1;
        replied.set(q);
        repliedCount++;
        final long now = System.nanoTime();
        lastProgressNs = now;
        final int answeredLane = slot % lanes.length;
        laneAnswerNs[answeredLane] = now;
        laneAnsweredTx[answeredLane] = firstTx[slot];
        io.answered(firstTx[slot], now);
        silence.seen();
        if (retries[slot] == 0) {
            // Only a packet sent once tells a round trip and an order (Karn): a retransmission's result may
            // answer an earlier copy, and in a loaded window that would declare lost what is only queued.
            final long sample = now - firstSentNs[slot];
            rtt.sample(sample);
            unmeasured.seen();
            final int lane = slot % lanes.length;
            if (!laneKnown[lane] || firstSentNs[slot] - laneSentNs[lane] > 0) {
                laneKnown[lane] = true;
                laneSentNs[lane] = firstSentNs[slot];
                laneRttNs[lane] = sample;
            }
            if (anyOutstandingSent && now - oldestSentNs > lossWindow(lane)) {
                detectLosses(now);
            }
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
            return;
        }
        if (scaled) {
            trySend(q + lookahead);
        }
        trySend(q + poolSize);
    }

    /** No timeout retransmission before this: a probe waits a timeout after the previous one. */
    private long nextProbeNs = System.nanoTime();
    /** The packets sent as probes, and whether the result of one came since the latest timeout round. */
    private final BitSet probed;
    private boolean probeAnswered;
    /** Scratch of a probe round: per lane, the oldest expired packet's slot and its timer's start. */
    private final int[] probeOfLane;
    private final long[] probeStartOfLane;

    private void retransmitOnTimeout(final int slot, final long now) {
        lastSentNs[slot] = now;
        retries[slot]++;
        timeouts[slot]++;
        io.countTimeoutRetransmission();
        transmit(outstanding[slot], slot);
    }

    /** Period of the retransmission timer. */
    static final long TICK_NS = RttEstimator.GRANULARITY_NS;
    /** A timer that runs this late means the thread stood still (a stall, not a network delay). */
    static final long STALL_NS = 3 * TICK_NS;
    private long lastTickNs;

    /** How long a packet overtaken on {@code lane} waits before it is presumed lost: a round trip and a quarter. */
    private long lossWindow(final int lane) {
        final long r = Math.min(laneRttNs[lane], rtt.typicalNs());
        return r + Math.max(r >> 2, REORDER_FLOOR_NS);
    }

    /**
     * Sends again every outstanding packet that a later packet to its lane overtook by more than the loss
     * window (the caller flushes), and makes {@link #oldestSentNs} exact.
     */
    private void detectLosses(final long now) {
        long oldest = now;
        boolean any = false;
        for (int slot = 0; slot < poolSize; slot++) {
            final int q = outstanding[slot];
            if (q < 0) {
                continue;
            }
            final int lane = slot % lanes.length;
            if (laneKnown[lane] && laneSentNs[lane] - lastSentNs[slot] > 0
                    && now - lastSentNs[slot] >= lossWindow(lane)) {
                lastSentNs[slot] = now;
                retries[slot]++;
                io.countLossDetectedRetransmission();
                transmit(q, slot);
            }
            if (!any || lastSentNs[slot] - oldest < 0) {
                oldest = lastSentNs[slot];
            }
            any = true;
        }
        oldestSentNs = oldest;
        anyOutstandingSent = any;
    }

    /** One tick of the socket's retransmission timer (every {@link #TICK_NS}, while this call runs). */
    void tick() {
        if (done.isDone()) {
            return;
        }
        final long now = System.nanoTime();
        final long gap = now - lastTickNs;
        lastTickNs = now;
        if (gap > STALL_NS) {
            // The timer ran late: this thread (or the whole process: GC) stood still, and so did whatever
            // had to answer. Results may be waiting in the socket. Time out nothing for the stall itself.
            final long shift = gap - TICK_NS;
            for (int slot = 0; slot < poolSize; slot++) {
                lastSentNs[slot] += shift;
            }
            for (int lane = 0; lane < lanes.length; lane++) {
                laneAnswerNs[lane] += shift;
            }
            nextProbeNs += shift;
            return;
        }
        if (now - lastProgressNs > resultTimeoutNs) {
            if (!askBeforeTimeout) {
                timeout();
                return;
            }
            stalled = true; // the caller decides (off this thread) whether to wait on or give up
        }
        final long before = io.retransmissions();
        detectLosses(now); // also what no later result came to reveal since the window passed
        final long rto = rtt.rtoNs();
        if (now - nextProbeNs >= 0) {
            // While results come (one within the last timeout), what expired is lost: it is all sent again. After
            // a timeout's worth of silence, only the oldest expired packet is sent again (a probe), as TCP's
            // timeout resends only its first unacknowledged segment: a silent window is far more often waiting
            // (for a worker or a switch thread that stood still, which every packet of it waits for alike) than
            // lost whole. Once a probe is answered the path is known to work, and the next round sends every
            // packet that expired since (a silent window lost whole costs two timeouts, not one per packet).
            final boolean all = probeAnswered || now - lastProgressNs < rto;
            java.util.Arrays.fill(probeOfLane, -1);
            boolean any = false;
            for (int slot = 0; slot < poolSize; slot++) {
                final int q = outstanding[slot];
                if (q < 0) {
                    continue;
                }
                final long start = timerStartNs(slot);
                if (now - start >= timeout(rto, Math.max(Math.max(silence.rounds, unmeasured.rounds),
                        timeouts[slot] / RETRIES_PER_DOUBLING))) {
                    any = true;
                    final int lane = slot % lanes.length;
                    if (all) {
                        retransmitOnTimeout(slot, now);
                    } else if (probeOfLane[lane] < 0 || start - probeStartOfLane[lane] < 0) {
                        probeOfLane[lane] = slot; // the oldest expired packet of each lane (each its own queue)
                        probeStartOfLane[lane] = start;
                    }
                }
            }
            if (any) {
                if (!all) {
                    for (int lane = 0; lane < lanes.length; lane++) {
                        if (probeOfLane[lane] >= 0) {
                            retransmitOnTimeout(probeOfLane[lane], now);
                            probed.set(outstanding[probeOfLane[lane]]);
                        }
                    }
                }
                probeAnswered = false;
                // Two rounds with no result in between: silence, not random loss. Back off; and keep backed off
                // while no round trip is measured. The next probe waits a (backed-off) timeout.
                silence.round();
                unmeasured.round();
                nextProbeNs = now + timeout(rto, Math.max(silence.rounds, unmeasured.rounds));
            }
        }
        if (io.retransmissions() != before) {
            io.sender.flush();
        }
    }

    /**
     * When the timeout of {@code slot}'s outstanding packet started: its latest transmission, or the latest
     * result since then that answered a packet which entered the worker's link before that transmission.
     * Packets leave the link in order, so this one was still waiting behind the one answered, in the
     * worker's queue, the switch's or another worker's: a window larger than the path's bandwidth-delay
     * product queues, and timing each packet from its own transmission would time out a window that is
     * only waiting (RFC 6298, 5.3, restarts its one timer on every acknowledgment for the same reason). Each
     * lane's latest result counts, whichever lane the packet is on, because the link ahead of it is shared.
     */
    private long timerStartNs(final int slot) {
        long start = lastSentNs[slot];
        for (int lane = 0; lane < lanes.length; lane++) {
            final long answered = laneAnsweredTx[lane];
            if (answered >= 0 && answered < lastTx[slot] && laneAnswerNs[lane] - start > 0) {
                start = laneAnswerNs[lane];
            }
        }
        // The socket's latest result too, of any call on it (another shard's part of the same call, say): their
        // datagrams queue in the same link.
        if (io.lastAnsweredTx >= 0 && io.lastAnsweredTx < lastTx[slot] && io.lastAnswerNs - start > 0) {
            start = io.lastAnswerNs;
        }
        return start;
    }

    /** {@code rto} doubled {@code exponent} times, at most the ceiling. */
    private long timeout(final long rto, final int exponent) {
        final int e = Math.min(exponent, MAX_EXPONENT);
        return rto > maxTimeoutNs >> e ? maxTimeoutNs : Math.min(maxTimeoutNs, rto << e);
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
        fail(new SwitchMLTimeoutException(session.describe()
                + ": no result for slot " + slot + " (packet " + (firstPacket + oldest) + ", " + repliedCount
                + " of " + total + " packets of this call answered) from switch " + to.getHostString() + ":"
                + to.getPort() + " within " + TimeUnit.NANOSECONDS.toMillis(resultTimeoutNs)
                + " ms; are all " + spec.numWorkers() + " workers running, and is this registration of the job still "
                + "installed (registering the job again gives it a new secret and ends this session)?", slot));
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

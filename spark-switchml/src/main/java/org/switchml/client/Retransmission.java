package org.switchml.client;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The loss-recovery policy of one call, as docs/design.md ("Loss recovery") describes it: later results reveal a
 * packet overtaken on its lane; a timeout, restarted while the packet only queues, covers the rest, probing one
 * packet per lane after silence. It knows slots, lanes and times, never bytes or sockets: the call tells it what
 * happened (a packet sent, a result accepted, a timer tick) and when, and it asks {@link Resend} to send a slot's
 * packet again. Every time comes from the caller, so a test drives it with a clock of its own.
 *
 * <p>Not thread-safe: one call's, on the worker socket's event loop.
 */
final class Retransmission {
    /** The link every call of one worker socket shares: the order datagrams enter it, and its latest result. */
    interface Link {
        /** The place of the next datagram in the order datagrams enter the link. */
        long nextTx();

        /** A result came at {@code now} for a packet first sent as the {@code firstTx}-th datagram. */
        void answered(long firstTx, long now);

        /** The first transmission's place of the packet the link's latest result answered, or -1. */
        long lastAnsweredTx();

        /** When the link's latest result came. */
        long lastAnswerNs();
    }

    /** Sends the outstanding packet of a slot again. */
    interface Resend {
        /** @param lossDetected whether later results found it lost (else its timeout expired) */
        void resend(int slot, boolean lossDetected);
    }

    /** Retransmissions of one packet, in a row, per doubling of its own timeout. */
    static final int RETRIES_PER_DOUBLING = 4;
    /** Largest backoff exponent (2^16 x the timeout is past any ceiling). */
    private static final int MAX_EXPONENT = 16;
    /** Smallest extra wait before a packet overtaken by later results is presumed lost. */
    static final long REORDER_FLOOR_NS = 100_000;
    /** Period of the retransmission timer. */
    static final long TICK_NS = RttEstimator.GRANULARITY_NS;
    /** A timer that runs this late means the thread stood still (a stall, not a network delay). */
    static final long STALL_NS = 3 * TICK_NS;

    private final int poolSize;
    private final int lanes;
    private final RttEstimator rtt;
    private final FirstResultWaits firstResultWaits;
    private final long maxTimeoutNs;
    private final Link link;
    private final Resend resend;

    /** Per slot: the packet outstanding on it (-1: none), when it was first and last sent, and how often again. */
    private final int[] outstanding;

    private final long[] firstSentNs;
    private final long[] lastSentNs;
    /** Per slot: the link's transmission count at the outstanding packet's first and latest transmission. */
    private final long[] firstTx;

    private final long[] lastTx;
    private final int[] retries;
    /** Per slot: timeouts in a row of the outstanding packet (its own backoff). */
    private final int[] timeouts;

    /**
     * Per lane: the first transmission time and round trip of the most recently sent packet that was answered at
     * its first transmission (the reference of loss detection), once there is one.
     */
    private final long[] laneSentNs;

    private final long[] laneRttNs;
    private final boolean[] laneKnown;
    /**
     * Per lane: when its latest result came, and the transmission count at the first transmission of the packet
     * it answered (-1 before any result): progress of the queue, which restarts the timeout of every packet sent
     * behind that one.
     */
    private final long[] laneAnswerNs;

    private final long[] laneAnsweredTx;
    /** No outstanding packet was last sent before this (exact after each loss scan, stale-low between). */
    private long oldestSentNs;

    private boolean anyOutstandingSent;

    /** The window's backoff: retransmission rounds in a row without any result in between. */
    private final RoundsWithout silence = new RoundsWithout();
    /**
     * Retransmission rounds in a row with no round trip measured in between (no packet answered at its first
     * transmission): the timeout stays doubled that many times until one is (Karn). Results keep coming in a
     * retransmission storm, so {@link #silence} stays 0 there; what stops coming are first-transmission answers,
     * because every packet waits in the queue the copies made longer than the stale timeout.
     */
    private final RoundsWithout unmeasured = new RoundsWithout();

    /** When the latest result came (the call's start before the first). */
    private long lastAnswerNs;
    /** The call's start, and whether a result came since. */
    private final long startNs;

    private boolean answeredAny;
    /** When the latest timeout round before the first result sent a probe (-1: none did). */
    private long probedBeforeFirstNs = -1;
    /** No timeout retransmission before this: a round waits a (backed-off) timeout after the previous one. */
    private long nextRoundNs;
    /** The packets sent as probes, and whether the result of one came since the latest timeout round. */
    private final BitSet probed = new BitSet();

    private boolean probeAnswered;
    /** Scratch of a probe round: per lane, the oldest expired packet's slot and its timer's start. */
    private final int[] probeOfLane;

    private final long[] probeStartOfLane;
    private long lastTickNs;

    /**
     * @param poolSize the job's slots
     * @param lanes    the switch's lanes (slot {@code s} goes to lane {@code s mod lanes})
     * @param rtt      the session's round-trip estimate, kept across calls
     * @param waits    how long the socket's calls waited for their first result
     * @param link     the worker socket's link
     * @param resend   how a slot's packet is sent again
     * @param now      the call's start
     */
    Retransmission(
            final int poolSize,
            final int lanes,
            final RttEstimator rtt,
            final FirstResultWaits waits,
            final Link link,
            final Resend resend,
            final long now) {
        this.poolSize = poolSize;
        this.lanes = lanes;
        this.rtt = rtt;
        this.firstResultWaits = waits;
        this.maxTimeoutNs = rtt.maxNs();
        this.link = link;
        this.resend = resend;
        this.outstanding = new int[poolSize];
        Arrays.fill(outstanding, -1);
        this.firstSentNs = new long[poolSize];
        this.lastSentNs = new long[poolSize];
        this.firstTx = new long[poolSize];
        this.lastTx = new long[poolSize];
        this.retries = new int[poolSize];
        this.timeouts = new int[poolSize];
        this.laneSentNs = new long[lanes];
        this.laneRttNs = new long[lanes];
        this.laneKnown = new boolean[lanes];
        this.laneAnswerNs = new long[lanes];
        this.laneAnsweredTx = new long[lanes];
        Arrays.fill(laneAnsweredTx, -1);
        this.probeOfLane = new int[lanes];
        this.probeStartOfLane = new long[lanes];
        this.lastAnswerNs = now;
        this.startNs = now;
        // The first round waits as the socket's recent calls waited for their first result: other workers late to
        // the call are not a loss (a loss is still recovered then, or as soon as the first result comes).
        this.nextRoundNs = now + waits.allowanceNs(maxTimeoutNs);
        this.lastTickNs = now;
    }

    /** The packet outstanding on {@code slot}, or -1. */
    int outstanding(final int slot) {
        return outstanding[slot];
    }

    /** The oldest outstanding packet, or -1 when none is. */
    int oldestOutstanding() {
        int oldest = -1;
        for (int slot = 0; slot < poolSize; slot++) {
            final int q = outstanding[slot];
            if (q >= 0 && (oldest < 0 || q < oldest)) {
                oldest = q;
            }
        }
        return oldest;
    }

    /** Packet {@code q} goes out on {@code slot} for the first time, now (the caller sends it right after). */
    void sent(final int slot, final int q, final long now) {
        outstanding[slot] = q;
        firstSentNs[slot] = now;
        lastSentNs[slot] = now;
        retries[slot] = 0;
        timeouts[slot] = 0;
        firstTx[slot] = link.nextTx();
        lastTx[slot] = firstTx[slot];
        if (!anyOutstandingSent) {
            anyOutstandingSent = true;
            oldestSentNs = now;
        }
    }

    /** The result of {@code slot}'s outstanding packet came, now; may send overtaken packets again. */
    void answered(final int slot, final long now) {
        final int q = outstanding[slot];
        if (probed.get(q)) {
            probeAnswered = true;
        }
        outstanding[slot] = -1;
        lastAnswerNs = now;
        if (!answeredAny) {
            answeredAny = true;
            // A result soon after a probe most likely answers it (the call's first packets were lost, and the wait
            // says nothing of the other workers): learning from it would lengthen the next calls' wait by a loss.
            if (probedBeforeFirstNs < 0 || now - probedBeforeFirstNs > 2 * rtt.shortestNs() + TICK_NS) {
                firstResultWaits.record(now - startNs);
            }
            if (nextRoundNs - now > 0) {
                nextRoundNs = now; // every worker has sent: expired packets are lost or queued, not early
            }
        }
        final int lane = slot % lanes;
        laneAnswerNs[lane] = now;
        laneAnsweredTx[lane] = firstTx[slot];
        link.answered(firstTx[slot], now);
        silence.seen();
        if (retries[slot] == 0) {
            // Only a packet sent once tells a round trip and an order (Karn): a retransmission's result may
            // answer an earlier copy, and in a loaded window that would declare lost what is only queued.
            final long sample = now - firstSentNs[slot];
            rtt.sample(sample);
            unmeasured.seen();
            if (!laneKnown[lane] || firstSentNs[slot] - laneSentNs[lane] > 0) {
                laneKnown[lane] = true;
                laneSentNs[lane] = firstSentNs[slot];
                laneRttNs[lane] = sample;
            }
            if (anyOutstandingSent && now - oldestSentNs > lossWindow(lane)) {
                detectLosses(now);
            }
        }
    }

    /**
     * A tick of the timer, now. Returns false when the timer ran late (the thread stood still, and so did what had
     * to answer: results may be waiting in the socket): then nothing is timed out for the stall, and the caller
     * should not time the call out either.
     */
    boolean clockTicks(final long now) {
        final long gap = now - lastTickNs;
        lastTickNs = now;
        if (gap <= STALL_NS) {
            return true;
        }
        final long shift = gap - TICK_NS;
        for (int slot = 0; slot < poolSize; slot++) {
            lastSentNs[slot] += shift;
        }
        for (int lane = 0; lane < lanes; lane++) {
            laneAnswerNs[lane] += shift;
        }
        nextRoundNs += shift;
        return false;
    }

    /** Sends again what later results found lost or whose timeout expired, now (after {@link #clockTicks}). */
    void retransmit(final long now) {
        detectLosses(now); // also what no later result came to reveal since the window passed
        final long rto = rtt.rtoNs();
        if (now - nextRoundNs < 0) {
            return;
        }
        final boolean all = probeAnswered || now - lastAnswerNs < rto;
        Arrays.fill(probeOfLane, -1);
        boolean any = false;
        for (int slot = 0; slot < poolSize; slot++) {
            if (outstanding[slot] < 0) {
                continue;
            }
            final long start = timerStartNs(slot);
            if (now - start
                    >= timeout(
                            rto,
                            Math.max(
                                    Math.max(silence.rounds, unmeasured.rounds),
                                    timeouts[slot] / RETRIES_PER_DOUBLING))) {
                any = true;
                final int lane = slot % lanes;
                if (all) {
                    onTimeout(slot, now);
                } else if (probeOfLane[lane] < 0 || start - probeStartOfLane[lane] < 0) {
                    probeOfLane[lane] = slot; // the oldest expired packet of each lane (each its own queue)
                    probeStartOfLane[lane] = start;
                }
            }
        }
        if (!any) {
            return;
        }
        if (!answeredAny) {
            probedBeforeFirstNs = now;
        }
        if (!all) {
            for (int lane = 0; lane < lanes; lane++) {
                if (probeOfLane[lane] >= 0) {
                    probed.set(outstanding[probeOfLane[lane]]);
                    onTimeout(probeOfLane[lane], now);
                }
            }
        }
        probeAnswered = false;
        // Two rounds with no result in between: silence, not random loss. Back off; and keep backed off while no
        // round trip is measured. The next round waits a (backed-off) timeout.
        silence.round();
        unmeasured.round();
        nextRoundNs = now + timeout(rto, Math.max(silence.rounds, unmeasured.rounds));
    }

    private void onTimeout(final int slot, final long now) {
        lastSentNs[slot] = now;
        retries[slot]++;
        timeouts[slot]++;
        lastTx[slot] = link.nextTx();
        resend.resend(slot, false);
    }

    /** How long a packet overtaken on {@code lane} waits before it is presumed lost: a round trip and a quarter. */
    private long lossWindow(final int lane) {
        final long r = Math.min(laneRttNs[lane], rtt.typicalNs());
        return r + Math.max(r >> 2, REORDER_FLOOR_NS);
    }

    /**
     * Sends again every outstanding packet that a later packet to its lane overtook by more than the loss window,
     * and makes {@link #oldestSentNs} exact.
     */
    private void detectLosses(final long now) {
        long oldest = now;
        boolean any = false;
        for (int slot = 0; slot < poolSize; slot++) {
            if (outstanding[slot] < 0) {
                continue;
            }
            final int lane = slot % lanes;
            if (laneKnown[lane]
                    && laneSentNs[lane] - lastSentNs[slot] > 0
                    && now - lastSentNs[slot] >= lossWindow(lane)) {
                lastSentNs[slot] = now;
                retries[slot]++;
                lastTx[slot] = link.nextTx();
                resend.resend(slot, true);
            }
            if (!any || lastSentNs[slot] - oldest < 0) {
                oldest = lastSentNs[slot];
            }
            any = true;
        }
        oldestSentNs = oldest;
        anyOutstandingSent = any;
    }

    /**
     * When the timeout of {@code slot}'s outstanding packet started: its latest transmission, or the latest result
     * since then that answered a packet which entered the worker's link before that transmission. Packets leave the
     * link in order, so this one was still waiting behind the one answered, in the worker's queue, the switch's or
     * another worker's: a window larger than the path's bandwidth-delay product queues, and timing each packet from
     * its own transmission would time out a window that is only waiting (RFC 6298, 5.3, restarts its one timer on
     * every acknowledgment for the same reason). Every lane's latest result counts, and the link's latest (of any
     * call on the socket, another shard's part of the same call, say), because the link ahead is shared.
     */
    private long timerStartNs(final int slot) {
        long start = lastSentNs[slot];
        for (int lane = 0; lane < lanes; lane++) {
            final long answered = laneAnsweredTx[lane];
            if (answered >= 0 && answered < lastTx[slot] && laneAnswerNs[lane] - start > 0) {
                start = laneAnswerNs[lane];
            }
        }
        final long linkAnswered = link.lastAnsweredTx();
        if (linkAnswered >= 0 && linkAnswered < lastTx[slot] && link.lastAnswerNs() - start > 0) {
            start = link.lastAnswerNs();
        }
        return start;
    }

    /** {@code rto} doubled {@code exponent} times, at most the ceiling. */
    private long timeout(final long rto, final int exponent) {
        final int e = Math.min(exponent, MAX_EXPONENT);
        return rto > maxTimeoutNs >> e ? maxTimeoutNs : Math.min(maxTimeoutNs, rto << e);
    }

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
}

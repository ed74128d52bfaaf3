package org.switchml.client;

import java.util.Arrays;

/**
 * Retransmission timeout from measured round trips, as TCP computes it (RFC 6298): smoothed RTT plus
 * the larger of four mean deviations and the timer's granularity, within [floor, ceiling]. Until the
 * first sample it is the configured first timeout. Only packets sent once are sampled (Karn's rule), so
 * a retransmission never passes an earlier copy's result off as a short round trip. A loaded host shows
 * up as longer and more variable round trips, which raise the timeout by themselves.
 *
 * <p>Not thread-safe: used by one call at a time, on the worker's event loop. Kept per session, so
 * a call starts from what the previous calls measured.
 */
final class RttEstimator {
    /** The retransmission timer's period: timeouts are only checked this often. */
    static final long GRANULARITY_NS = 1_000_000;

    private final long initialNs;
    private final long minNs;
    private final long maxNs;
    private long srttNs = -1;
    private long rttvarNs;
    /** The latest samples, for their median. */
    private final long[] recent = new long[RECENT];

    private int recentCount;
    private int recentNext;
    private long median = -1;
    private final long[] sorted = new long[RECENT];

    RttEstimator(final long minNs, final long initialNs, final long maxNs) {
        this.minNs = minNs;
        this.initialNs = initialNs;
        this.maxNs = maxNs;
    }

    void sample(final long rttNs) {
        recent[recentNext] = rttNs;
        recentNext = (recentNext + 1) % RECENT;
        recentCount = Math.min(RECENT, recentCount + 1);
        median = -1;
        if (srttNs < 0) {
            srttNs = rttNs;
            rttvarNs = rttNs / 2;
        } else {
            rttvarNs += (Math.abs(srttNs - rttNs) - rttvarNs) / 4;
            srttNs += (rttNs - srttNs) / 8;
        }
    }

    /**
     * Current timeout for a packet's first retransmission, before any backoff: RFC 6298's, but at most
     * {@value #MEDIANS} medians of the recent round trips. With several workers, a packet's round trip
     * includes waiting for the slowest worker's contribution to the same slot; when another worker is
     * recovering a loss, that wait is its recovery time. Those samples are a minority under random loss,
     * but the mean-and-deviation estimator follows them up, and a longer timeout makes the next recovery,
     * and the next such sample, longer still. The median ignores them.
     */
    long rtoNs() {
        if (srttNs < 0) {
            return initialNs;
        }
        // At least half a round trip of margin. Behind a shaped link a window larger than the path's
        // bandwidth-delay product queues, every round trip is that queue, the deviations fade, and RFC 6298's
        // timeout shrinks to a round trip plus a tick: the next hiccup (a worker off the CPU for a few ms)
        // then times out the whole window, whose copies lengthen the queue and the next round trips, and
        // retransmissions feed themselves. TCP avoids it with a 200 ms floor, far too long for a loopback.
        final long rfc = srttNs + Math.max(Math.max(GRANULARITY_NS, 4 * rttvarNs), srttNs / 2);
        final long robust = MEDIANS * typicalNs() + GRANULARITY_NS;
        return Math.max(minNs, Math.min(maxNs, Math.min(rfc, robust)));
    }

    /** Recent round trips the timeout may span, at most. */
    static final int MEDIANS = 4;
    /** How many recent samples the median covers. */
    static final int RECENT = 32;

    /** The median of the recent round trips (the initial timeout before the first sample). */
    long typicalNs() {
        if (recentCount == 0) {
            return initialNs;
        }
        if (median < 0) {
            System.arraycopy(recent, 0, sorted, 0, recentCount);
            Arrays.sort(sorted, 0, recentCount);
            median = sorted[recentCount / 2];
        }
        return median;
    }

    /**
     * The shortest recent round trip (0 before the first sample): the path's own, with the least waiting for other
     * workers or queues in it.
     */
    long shortestNs() {
        long shortest = Long.MAX_VALUE;
        for (int i = 0; i < recentCount; i++) {
            shortest = Math.min(shortest, recent[i]);
        }
        return recentCount == 0 ? 0 : shortest;
    }

    /** The ceiling of the timeout and of its backoff. */
    long maxNs() {
        return maxNs;
    }

    /** Smoothed round trip (ns), or -1 before the first sample. */
    long srttNs() {
        return srttNs;
    }
}

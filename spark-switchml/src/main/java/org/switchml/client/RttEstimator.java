package org.switchml.client;

/**
 * Retransmission timeout from measured round trips (smoothed RTT plus four deviations, as TCP does),
 * never below the configured timeout, so a loaded machine or a slow network does not trigger a storm
 * of spurious retransmissions. Only packets sent once are sampled (Karn's rule). Not thread-safe:
 * used by one call at a time, on the worker's event loop.
 */
final class RttEstimator {
    private final long initialNs;
    private final long maxNs;
    private long srttNs = -1;
    private long rttvarNs;

    RttEstimator(final long initialNs, final long maxNs) {
        this.initialNs = initialNs;
        this.maxNs = maxNs;
    }

    void sample(final long rttNs) {
        if (srttNs < 0) {
            srttNs = rttNs;
            rttvarNs = rttNs / 2;
        } else {
            rttvarNs += (Math.abs(srttNs - rttNs) - rttvarNs) / 4;
            srttNs += (rttNs - srttNs) / 8;
        }
    }

    /** Current timeout for a first transmission. */
    long rtoNs() {
        if (srttNs < 0) {
            return initialNs;
        }
        // The configured timeout is a floor: scheduling jitter on a busy host is far larger than a
        // loopback round trip, and a spurious retransmission adds load exactly when there is least room.
        return Math.max(initialNs, Math.min(maxNs, srttNs + 4 * rttvarNs));
    }
}

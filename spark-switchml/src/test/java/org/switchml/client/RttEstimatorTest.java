package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The retransmission timeout from measured round trips: RFC 6298's, with its margin, floor, ceiling and median. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RttEstimatorTest {
    private static final long MS = 1_000_000;

    @Test
    void beforeAnySampleTheTimeoutIsTheFirstOne() {
        final RttEstimator e = new RttEstimator(MS, 20 * MS, 500 * MS);
        assertEquals(20 * MS, e.rtoNs());
        assertEquals(20 * MS, e.typicalNs());
        assertEquals(-1, e.srttNs());
    }

    @Test
    void theShortestRoundTripIsTheLeastOfTheRecentSamples() {
        final RttEstimator e = new RttEstimator(MS, 20 * MS, 500 * MS);
        assertEquals(0, e.shortestNs(), "before any sample");
        e.sample(3 * MS);
        e.sample(MS / 2); // a round trip with no other worker to wait for
        e.sample(40 * MS);
        assertEquals(MS / 2, e.shortestNs());
        for (int i = 0; i < RttEstimator.RECENT; i++) {
            e.sample(2 * MS);
        }
        assertEquals(2 * MS, e.shortestNs(), "only the recent samples count");
    }

    @Test
    void aSteadyRoundTripGivesItAndHalfOfItAsMargin() {
        final RttEstimator e = new RttEstimator(MS, 20 * MS, 500 * MS);
        for (int i = 0; i < 200; i++) {
            e.sample(8 * MS);
        }
        // The deviation fades to nothing: the margin is half a round trip (not RFC 6298's bare tick).
        assertEquals(8 * MS, e.srttNs());
        assertEquals(12 * MS, e.rtoNs());
    }

    @Test
    void aFewLongSamplesDoNotCarryTheTimeoutBeyondFourMedians() {
        final RttEstimator e = new RttEstimator(MS, 20 * MS, 500 * MS);
        for (int i = 0; i < 24; i++) {
            e.sample(2 * MS);
        }
        for (int i = 0; i < 8; i++) {
            e.sample(200 * MS); // another worker's recovery, waited for by this packet's slot
        }
        assertEquals(2 * MS, e.typicalNs(), "the median of the recent 32");
        assertEquals(4 * 2 * MS + RttEstimator.GRANULARITY_NS, e.rtoNs(), "at most four medians and a tick");
    }

    @Test
    void theTimeoutStaysWithinItsFloorAndCeiling() {
        final RttEstimator low = new RttEstimator(5 * MS, 20 * MS, 500 * MS);
        for (int i = 0; i < 50; i++) {
            low.sample(10_000); // 10 us round trips: a round trip and a tick would be 1.01 ms
        }
        assertEquals(5 * MS, low.rtoNs(), "the floor");
        final RttEstimator high = new RttEstimator(MS, 20 * MS, 50 * MS);
        for (int i = 0; i < 50; i++) {
            high.sample(400 * MS);
        }
        assertEquals(50 * MS, high.rtoNs(), "the ceiling");
        assertEquals(50 * MS, high.maxNs());
    }
}

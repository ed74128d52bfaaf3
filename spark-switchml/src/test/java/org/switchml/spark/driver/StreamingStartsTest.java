package org.switchml.spark.driver;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The driver's answer to a first call that had no result for the result timeout: the switch is silent only once
 * every rank has streamed for a whole result timeout. The clock is the test's own (nanoseconds from 0).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StreamingStartsTest {
    private static final long TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(2_000);
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    @Test
    void aRankThatStartedJustNowKeepsTheOthersWaitingForAWholeTimeout() {
        final StreamingStarts s = new StreamingStarts();
        s.started(0, 0);
        // Rank 1 (a new executor that read its partitions again) starts 4 s later, just before rank 0's
        // second stall: its packets may be in flight, so rank 0 waits on.
        s.started(1, 4_000 * MS);
        assertFalse(s.allStreamingFor(2, TIMEOUT_NS, 4_001 * MS), "gave up 1 ms after the last rank started");
        assertFalse(s.allStreamingFor(2, TIMEOUT_NS, 5_999 * MS));
        assertTrue(s.allStreamingFor(2, TIMEOUT_NS, 6_000 * MS), "a silence of a whole timeout is the switch's");
    }

    @Test
    void notEveryRankStreamingIsNeverTheSwitchsSilence() {
        final StreamingStarts s = new StreamingStarts();
        s.started(0, 0);
        s.started(0, 10 * MS); // a repeat neither counts as another rank nor moves the last start
        assertFalse(s.allStreamingFor(2, TIMEOUT_NS, 60_000 * MS));
        assertTrue(s.allStreamingFor(1, TIMEOUT_NS, 2_000 * MS));
        assertFalse(s.allStreamingFor(0, TIMEOUT_NS, 60_000 * MS), "a stage without a plan has no workers");
    }

    @Test
    void everyRankLongStreamingMeansTheSwitchIsSilent() {
        final StreamingStarts s = new StreamingStarts();
        for (int r = 0; r < 4; r++) {
            s.started(r, r * MS);
        }
        assertFalse(s.allStreamingFor(4, TIMEOUT_NS, 2_002 * MS));
        assertTrue(s.allStreamingFor(4, TIMEOUT_NS, 2_003 * MS));
    }
}

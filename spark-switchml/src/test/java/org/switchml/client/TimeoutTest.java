package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.SwitchMLException;
import org.switchml.testing.TestCluster;

/** A worker that never shows up gives a bounded, descriptive error, never a hang. */
class TimeoutTest {
    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(SwitchOptions.loopback(2));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void missingWorkerTimesOutNamingJobRankSwitchAndSlot() {
        final long boundMs = 1_500;
        try (TestCluster.Job job =
                cluster.job(77, 3, 3, 64, 16, ClientOptions.defaults().withResultTimeoutMs(boundMs))) {
            final long start = System.nanoTime();
            // Ranks 0 and 1 run; rank 2 never does.
            final List<SwitchMLException> errors = TestCluster.parallel(
                    2,
                    r -> assertThrows(
                            SwitchMLException.class, () -> job.session(r).allReduce(new float[1000])));
            final long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs < boundMs + 5_000, "took " + tookMs + " ms");
            for (int r = 0; r < 2; r++) {
                final SwitchMLException e = errors.get(r);
                assertTrue(e instanceof SwitchMLTimeoutException, "got " + e);
                final String m = e.getMessage();
                System.out.println("[timeout] " + m);
                assertTrue(m.contains("job 77"), m);
                assertTrue(m.contains("rank " + r), m);
                assertTrue(m.contains("slot "), m);
                final int slot = ((SwitchMLTimeoutException) e).missingSlot();
                final int port = cluster.sw.address().portForSlot(slot);
                assertTrue(m.contains("127.0.0.1:" + port), m);
            }
            // The session is unusable afterwards, and says so instead of hanging.
            final SwitchMLException again =
                    assertThrows(SwitchMLException.class, () -> job.session(0).allReduce(new float[10]));
            assertTrue(again.getMessage().contains("broken"), again.getMessage());
            assertEquals(0, cluster.sw.traffic().errors());
        }
    }

    @Test
    void switchThatIsGoneTimesOutToo() {
        try (TestCluster other = TestCluster.start(SwitchOptions.loopback(1))) {
            final TestCluster.Job job =
                    other.job(78, 0, 1, 64, 8, ClientOptions.defaults().withResultTimeoutMs(800));
            other.sw.close();
            final SwitchMLException e =
                    assertThrows(SwitchMLException.class, () -> job.session(0).allReduce(new double[100]));
            assertTrue(e.getMessage().contains("job 78"), e.getMessage());
            job.close();
        }
    }
}

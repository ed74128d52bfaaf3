package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;
import org.switchml.transport.FaultPlan;

/**
 * Jobs wider than one 64-bit bitmap word, up to every rank the 8-bit field has, through the client API on
 * the software switch, with 1 % of the datagrams lost in each direction: every worker gets the same,
 * exact sum.
 */
@Timeout(300)
class WideJobTest {
    private static final int K = 256;
    private static final int POOL = 16;

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {64, 256})
    void everyWorkerGetsTheExactSumUnderLoss(final int n) {
        final long seed = Seeds.seed("wide job of " + n, 64L + n);
        final FaultPlan loss = new FaultPlan(0.01, 0, 0, 0, seed);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int length = K * POOL * 2 + 5; // two rounds of the pool, and a short last block
        try (TestCluster c = TestCluster.start(SwitchOptions.loopback(2).withFaults(loss.withSeed(seed + 1)));
                TestCluster.Job job = c.job(
                        9000 + n,
                        0,
                        n,
                        K,
                        POOL,
                        ClientOptions.defaults()
                                .withRetransmitTimeoutMs(20, 400)
                                .withFaults(loss))) {
            final int[][] ints = new int[n][];
            final float[][] floats = new float[n][];
            final double[][] asDoubles = new double[n][];
            for (int r = 0; r < n; r++) {
                ints[r] = rnd.ints(length).toArray();
                floats[r] = Vectors.toFloats(Vectors.mixed(rnd, length));
                asDoubles[r] = Vectors.toDoubles(floats[r]);
            }
            final List<int[]> intSums =
                    TestCluster.parallel(n, r -> job.session(r).allReduce(ints[r]));
            final int[] expectedInts = new int[length];
            for (final int[] v : ints) {
                for (int i = 0; i < length; i++) {
                    expectedInts[i] += v[i]; // the switch's sums wrap modulo 2^32, as Java's do
                }
            }
            final List<float[]> floatSums =
                    TestCluster.parallel(n, r -> job.session(r).allReduce(floats[r]));
            final float[] expectedFloats = Vectors.toFloats(Reference.fp32(asDoubles, K));
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expectedInts, intSums.get(r), n + " workers, int32, rank " + r);
                assertArrayEquals(expectedFloats, floatSums.get(r), n + " workers, fp32, rank " + r);
            }
            final JobCounters counters = c.sw.counters(job.spec().jobId());
            System.out.println("[wide] " + n + " workers, " + length + " elements, seed " + seed + ": " + counters);
            assertTrue(counters.retransmissions() > 0, "1 % loss caused no retransmission: " + counters);
            final long packetsPerWorker = 2L * ((length + K - 1) / K);
            assertTrue(
                    counters.packetsIn() >= n * packetsPerWorker,
                    "the switch saw " + counters.packetsIn() + " contributions, fewer than " + n * packetsPerWorker);
        }
    }

    @Test
    void aJobBeyondTheRankFieldIsRefusedNamingTheLimit() {
        final List<InetSocketAddress> workers = new ArrayList<>();
        for (int r = 0; r <= Wire.MAX_WORKERS; r++) {
            workers.add(new InetSocketAddress("127.0.0.1", 10_000 + r));
        }
        final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new JobSpec(1, 0, K, POOL, workers));
        assertTrue(e.getMessage().contains("1..256") && e.getMessage().contains("257"), e.getMessage());
    }
}

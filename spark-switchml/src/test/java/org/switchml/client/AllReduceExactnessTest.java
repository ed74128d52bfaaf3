package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobCounters;
import org.switchml.testing.ExactSum;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/** Every worker's result equals the documented reference bit for bit, and lies within the error bound. */
class AllReduceExactnessTest {
    private static final int K = 64;
    private static final int POOL = 128;
    /** Longest vector also checked against {@link ExactSum} (decimal arithmetic is slow; Reference covers the rest). */
    private static final int EXACT_UP_TO = 10_000;

    private static final AtomicInteger JOB_IDS = new AtomicInteger(100);
    private static TestCluster cluster;

    @BeforeAll
    static void startSwitch() {
        cluster = TestCluster.start(SwitchOptions.loopback(2));
    }

    @AfterAll
    static void stopSwitch() {
        cluster.close();
    }

    static Stream<Arguments> cases() {
        final List<Arguments> out = new ArrayList<>();
        for (final int n : new int[] {1, 2, 3, 4, 8, 16, 32}) {
            for (final int len : new int[] {0, 1, K - 1, K, K + 1, 1_000_000}) {
                out.add(Arguments.of(n, len));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "n={0} length={1}")
    @MethodSource("cases")
    void floatSumsAreBitExactOnEveryWorker(final int n, final int length) {
        final SplittableRandom rnd =
                new SplittableRandom(Seeds.seed("float n=" + n + " len=" + length, 1000L * n + length));
        final double[][] in = new double[n][];
        final float[][] fin = new float[n][];
        for (int r = 0; r < n; r++) {
            fin[r] = Vectors.toFloats(Vectors.mixed(rnd, length));
            in[r] = Vectors.toDoubles(fin[r]);
        }
        try (TestCluster.Job job = cluster.job(JOB_IDS.incrementAndGet(), 0, n, K, POOL, ClientOptions.defaults())) {
            final List<float[]> results =
                    TestCluster.parallel(n, r -> job.session(r).allReduce(fin[r]));
            final double[] ref = Reference.fp32(in, K);
            final float[] expected = Vectors.toFloats(ref);
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, results.get(r), "rank " + r + " differs from the reference");
            }
            if (length <= EXACT_UP_TO) {
                assertArrayEquals(
                        Vectors.toFloats(ExactSum.fp32(in, K)),
                        results.get(0),
                        "rank 0 differs from exact decimal arithmetic");
            }
            final double worst =
                    Reference.worstBoundRatio(in, Vectors.toDoubles(results.get(0)), Encoding.FP32_BLOCK, K, true);
            assertTrue(worst <= 1.0, "error exceeds the documented bound by a factor " + worst);
            final JobCounters c = cluster.sw.counters(job.spec().jobId());
            assertEquals(0, c.drops(DropReason.UNKNOWN_SENDER));
            assertEquals(0, c.drops(DropReason.STALE_SEQ));
        }
    }

    @ParameterizedTest(name = "fp64 n={0} length={1}")
    @MethodSource("fp64Cases")
    void fp64SumsAreBitExactAndKeep50Bits(final int n, final int length) {
        final SplittableRandom rnd =
                new SplittableRandom(Seeds.seed("fp64 n=" + n + " len=" + length, 77L * n + length));
        final double[][] in = new double[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, length);
        }
        try (TestCluster.Job job = cluster.job(
                JOB_IDS.incrementAndGet(),
                0,
                n,
                K,
                POOL,
                ClientOptions.defaults().withFp64(true))) {
            final List<double[]> results =
                    TestCluster.parallel(n, r -> job.session(r).allReduce(in[r]));
            final double[] expected = Reference.fp64(in, K);
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, results.get(r), 0.0, "rank " + r + " differs from the reference");
            }
            if (length <= EXACT_UP_TO) {
                assertArrayEquals(
                        ExactSum.fp64(in, K), results.get(0), 0.0, "rank 0 differs from exact decimal arithmetic");
            }
            final double worst = Reference.worstBoundRatio(in, results.get(0), Encoding.FP64_SPLIT, K, false);
            assertTrue(worst <= 1.0, "error exceeds the documented bound by a factor " + worst);
        }
    }

    static Stream<Arguments> fp64Cases() {
        return Stream.of(
                Arguments.of(1, K / 2 + 1),
                Arguments.of(2, 10_000),
                Arguments.of(5, 10_000),
                Arguments.of(32, 10_000),
                Arguments.of(4, 1_000_000));
    }

    @Test
    void doublesInFp32ModeAndIntsAreExactToo() {
        final int n = 3;
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("doubles+ints", 5));
        final double[][] in = new double[n][];
        final int[][] ints = new int[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, 5_000);
            ints[r] = rnd.ints(5_000).toArray();
        }
        try (TestCluster.Job job = cluster.job(JOB_IDS.incrementAndGet(), 0, n, K, POOL, ClientOptions.defaults())) {
            final List<double[]> d = TestCluster.parallel(n, r -> job.session(r).allReduce(in[r]));
            final List<int[]> s = TestCluster.parallel(n, r -> job.session(r).allReduce(ints[r]));
            final double[] expected = Reference.fp32(in, K);
            final int[] expectedInts = new int[5_000];
            for (int i = 0; i < expectedInts.length; i++) {
                for (int r = 0; r < n; r++) {
                    expectedInts[i] += ints[r][i];
                }
            }
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, d.get(r), 0.0);
                assertArrayEquals(expectedInts, s.get(r));
            }
            assertArrayEquals(ExactSum.fp32(in, K), d.get(0), 0.0, "differs from exact decimal arithmetic");
        }
    }

    @Test
    void repeatedCallsOnOneJobCarryTheShadowSetPhase() {
        final int n = 4;
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("repeated", 9));
        // Lengths chosen so calls use fewer, more, and not a multiple of the pool's packets.
        final int[] lengths = {K * 3 + 5, 0, K * POOL + 1, 1, K * 200 + 17, K * (POOL / 2 + 3)};
        try (TestCluster.Job job = cluster.job(JOB_IDS.incrementAndGet(), 0, n, K, POOL, ClientOptions.defaults())) {
            for (final int len : lengths) {
                final double[][] in = new double[n][];
                final float[][] fin = new float[n][];
                for (int r = 0; r < n; r++) {
                    fin[r] = Vectors.toFloats(Vectors.mixed(rnd, len));
                    in[r] = Vectors.toDoubles(fin[r]);
                }
                final List<float[]> results =
                        TestCluster.parallel(n, r -> job.session(r).allReduce(fin[r]));
                final float[] expected = Vectors.toFloats(Reference.fp32(in, K));
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(expected, results.get(r), "call with length " + len + ", rank " + r);
                }
            }
        }
    }
}

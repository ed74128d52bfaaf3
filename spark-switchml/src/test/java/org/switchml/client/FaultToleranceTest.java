package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobCounters;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;
import org.switchml.transport.FaultPlan;

/**
 * Results stay bit-exact when the network loses, duplicates and reorders packets in both directions.
 * The switch and the workers each get their own fault stream: the switch's faults act on results,
 * the workers' on contributions.
 */
class FaultToleranceTest {
    private static final int K = 64;
    private static final int POOL = 64;

    static Stream<Arguments> plans() {
        return Stream.of(
                Arguments.of("loss 1%", new FaultPlan(0.01, 0, 0, 0, 11), 4),
                Arguments.of("loss 10%", new FaultPlan(0.10, 0, 0, 0, 12), 4),
                Arguments.of("duplication 10%", new FaultPlan(0, 0.10, 0, 0, 13), 3),
                Arguments.of("reordering 20%", new FaultPlan(0, 0, 0.20, 0, 14), 3),
                Arguments.of("first window lost", new FaultPlan(0, 0, 0, POOL, 15), 4),
                Arguments.of("everything at once", new FaultPlan(0.05, 0.05, 0.05, 8, 16), 8));
    }

    private static int nextJob = 500;

    /** Each case starts its own switch, since a switch's fault plan is fixed when it starts. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("plans")
    void sumsStayExactUnderFaults(final String name, final FaultPlan plan, final int n) {
        final long seed = Seeds.seed("faults " + name, plan.seed());
        final FaultPlan seeded = plan.withSeed(seed);
        final SplittableRandom rnd = new SplittableRandom(seed);
        try (TestCluster c = TestCluster.start(SwitchOptions.loopback(2).withFaults(seeded.withSeed(seed + 1)));
                TestCluster.Job job = c.job(
                        nextJob++,
                        0,
                        n,
                        K,
                        POOL,
                        ClientOptions.defaults().withRetransmitTimeoutMs(5, 100).withFaults(seeded))) {
            for (final int length : new int[] {20_000, K * POOL + 3}) {
                final double[][] in = new double[n][];
                final float[][] fin = new float[n][];
                for (int r = 0; r < n; r++) {
                    fin[r] = Vectors.toFloats(Vectors.mixed(rnd, length));
                    in[r] = Vectors.toDoubles(fin[r]);
                }
                final List<float[]> results =
                        TestCluster.parallel(n, r -> job.session(r).allReduce(fin[r]));
                final float[] expected = Vectors.toFloats(Reference.fp32(in, K));
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(expected, results.get(r), name + ": rank " + r + ", length " + length);
                }
                // In place, fp64 (as an executor allreduces its sum): a retransmission re-encodes a block from
                // the input, so the sum may replace a block only once its result arrived.
                final double[][] buf = new double[n][];
                for (int r = 0; r < n; r++) {
                    buf[r] = in[r].clone();
                }
                TestCluster.parallel(n, r -> {
                    job.session(r)
                            .allReduce(buf[r], buf[r], true, job.session(r).resultTimeoutMs(), null);
                    return buf[r];
                });
                final double[] expected64 = Reference.fp64(in, K);
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(
                            expected64, buf[r], 0.0, name + ": in place, fp64, rank " + r + ", length " + length);
                }
            }
            final JobCounters counters = c.sw.counters(job.spec().jobId());
            final List<ClientStats> stats =
                    job.clients().stream().map(SwitchMLClient::stats).toList();
            System.out.println("[faults] " + name + ": " + counters + "; workers " + stats);
            if (seeded.loss() > 0 || seeded.dropFirst() > 0) {
                assertTrue(counters.retransmissions() > 0, "loss must have caused retransmissions");
            } else {
                assertFaultsHappened(name, seeded, counters, stats);
            }
        }
    }

    /**
     * Without loss, the counters show the plan's faults. A worker's retransmission draws at most one copy
     * of the switch's stored result, and the switch counts it at most once as a retransmission, so what
     * either side saw beyond the workers' retransmissions were copies the network made. A lane answers in
     * the order it receives, so loss detection by later results (ClientStats.lossDetected) fires when
     * answers come back out of order: with no loss in the plan, that is its reordering.
     */
    private static void assertFaultsHappened(
            final String name, final FaultPlan plan, final JobCounters counters, final List<ClientStats> stats) {
        long retransmitted = 0;
        long ignored = 0;
        long overtaken = 0;
        for (final ClientStats s : stats) {
            retransmitted += s.retransmissions();
            ignored += s.resultsIgnored();
            overtaken += s.lossDetected();
        }
        if (plan.duplicate() > 0) {
            assertTrue(
                    counters.retransmissions() > retransmitted,
                    name + ": the switch saw no duplicated " + "contribution beyond the workers' " + retransmitted
                            + " retransmissions: " + counters);
            assertTrue(
                    ignored > retransmitted,
                    name + ": the workers ignored " + ignored + " results, no more " + "than their " + retransmitted
                            + " retransmissions drew: no result was duplicated");
        }
        if (plan.reorder() > 0) {
            assertTrue(overtaken > 0, name + ": no packet was overtaken by a later one: " + stats);
        }
    }
}

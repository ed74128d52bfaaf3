package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.testing.Seeds;

/**
 * A local master runs every task of a stage in one executor, which then computes the switch's sum itself
 * ({@code spark.switchml.localShortcut}): no packet, no switch job, and the same bits as through the
 * switch, for every task. Each case runs the same seeded input with the shortcut on and off.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LocalShortcutTest {
    private static final int TASKS = 4;
    /** Several blocks per vector, so that each block's own exponent matters. */
    private static final int K = 256;

    private static JavaSparkContext jsc;
    /** The state each task of the loop saw, by "shortcut iteration task" (local mode: one JVM). */
    static final Map<String, double[]> SEEN = new ConcurrentHashMap<>();

    @BeforeAll
    static void start() {
        jsc = new JavaSparkContext(SparkTestSupport.conf("switchml-local-shortcut", "local[" + TASKS + "]", true));
        jsc.setLocalProperty(SwitchMLConfig.K.key(), Integer.toString(K));
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @AfterEach
    void clearLocalProperties() {
        jsc.setLocalProperty(SwitchMLConfig.PRECISION.key(), null);
        jsc.setLocalProperty(SwitchMLConfig.LOCAL_SHORTCUT.key(), null);
    }

    private static SwitchMLDriver driver() {
        return SwitchMLDriver.of(jsc.sc());
    }

    private static void shortcut(final boolean on) {
        jsc.setLocalProperty(SwitchMLConfig.LOCAL_SHORTCUT.key(), Boolean.toString(on));
    }

    @ParameterizedTest
    @ValueSource(strings = {"fp64", "fp32"})
    void theShortcutGivesTheSwitchsBitsWithoutAPacket(final String precision) {
        final long seed = Seeds.seed("local shortcut " + precision, 4242);
        final int dim = 3_001; // the last block is partial
        // More partitions than tasks: each task folds several, and the executor adds the tasks' folds.
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 90, dim, 11).cache();
        rdd.count();
        jsc.setLocalProperty(SwitchMLConfig.PRECISION.key(), precision);

        shortcut(false);
        final SwitchMLAggregator.Result viaSwitch =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        shortcut(true);
        final SwitchMLAggregator.Result inMemory =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], SparkTestSupport::addRow);

        assertFalse(viaSwitch.inMemory());
        assertTrue(viaSwitch.viaSwitch(), viaSwitch.fallbackReason());
        assertEquals(List.of(0), driver().generationsOf(viaSwitch.jobId()));
        final Optional<JobCounters> sent = driver().finalCounters(viaSwitch.jobId());
        assertTrue(sent.isPresent() && sent.get().packetsIn() > 0, "the switch path sent packets: " + sent);

        assertTrue(inMemory.inMemory());
        assertTrue(inMemory.viaSwitch(), "the shortcut is no fallback");
        assertEquals(1, inMemory.workers());
        assertEquals(List.of(), driver().generationsOf(inMemory.jobId()), "no switch job was installed");
        assertEquals(Optional.empty(), driver().finalCounters(inMemory.jobId()));

        assertSameBits(viaSwitch.sum(), inMemory.sum(), precision + ": shortcut against switch");
        // Not a trivial sum: it is the data's, within the quantization bound of treeAggregate's.
        final double[] tree = SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], SparkTestSupport::addRow);
        SparkTestSupport.assertWithinBlockRelative(
                tree, inMemory.sum(), precision.equals("fp64") ? K / 2 : K, precision.equals("fp64") ? 1e-12 : 1e-6);
        assertEquals(0, driver().fallbackCount());
        rdd.unpersist(true);
    }

    @Test
    void everyTaskOfALoopSeesTheSameBitsWithTheShortcutAsThroughTheSwitch() {
        final long seed = Seeds.seed("local shortcut loop", 4343);
        final int dim = 1_000;
        final int iterations = 4;
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 40, dim, TASKS).cache();
        rdd.count();
        SEEN.clear();
        shortcut(false);
        final ReplicatedLoop.Result viaSwitch = ReplicatedLoop.run(
                rdd, new double[dim], dim, new Recording("off"), new ReplicatedLoop.Options(iterations, 0, 0));
        shortcut(true);
        final ReplicatedLoop.Result inMemory = ReplicatedLoop.run(
                rdd, new double[dim], dim, new Recording("on"), new ReplicatedLoop.Options(iterations, 0, 0));

        assertEquals(0, viaSwitch.inMemoryStages());
        assertEquals(1, inMemory.inMemoryStages());
        assertTrue(viaSwitch.viaSwitch() && inMemory.viaSwitch());
        assertEquals(iterations, inMemory.iterations());
        assertEquals(List.of(), driver().generationsOf(inMemory.jobIds().get(0)), "no switch job was installed");
        assertSameBits(viaSwitch.state(), inMemory.state(), "final state");
        // Iteration i's contribution reads the sum of iteration i - 1: every task must have seen the same bits.
        final double[] first = SEEN.get("off 1 0");
        for (int it = 1; it < iterations; it++) {
            final double[] reference = SEEN.get("off " + it + " 0");
            assertNotNull(reference, "task 0 recorded iteration " + it);
            for (final String mode : new String[] {"off", "on"}) {
                for (int task = 0; task < TASKS; task++) {
                    final double[] seen = SEEN.get(mode + " " + it + " " + task);
                    assertNotNull(seen, mode + ": task " + task + " recorded iteration " + it);
                    assertSameBits(reference, seen, mode + ": iteration " + it + " task " + task);
                }
            }
        }
        assertTrue(first[0] != 0.0, "the recorded state is the data's sum");
        rdd.unpersist(true);
    }

    /** The loop's body: each task records the state it reads; the state is the last sum. */
    static final class Recording implements ReplicatedLoop.Body<double[]> {
        private static final long serialVersionUID = 1L;
        private final String mode;

        Recording(final String mode) {
            this.mode = mode;
        }

        @Override
        public double[] contribution(final List<double[]> records, final double[] state, final int iteration) {
            SEEN.put(mode + " " + iteration + " " + TaskContext.getPartitionId(), state.clone());
            final double[] v = new double[state.length];
            for (final double[] r : records) {
                for (int i = 0; i < v.length; i++) {
                    v[i] += r[i] + 0.25 * state[i];
                }
            }
            return v;
        }

        @Override
        public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
            return new ReplicatedLoop.Step(sum.clone(), new double[] {sum[0]}, false);
        }
    }

    private static void assertSameBits(final double[] expected, final double[] actual, final String what) {
        assertEquals(expected.length, actual.length, what + ": length");
        for (int i = 0; i < expected.length; i++) {
            final int at = i;
            assertEquals(
                    Double.doubleToRawLongBits(expected[i]),
                    Double.doubleToRawLongBits(actual[i]),
                    () -> what + ": element " + at + " is " + actual[at] + ", expected " + expected[at]);
        }
    }
}

package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StagePlans;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;

/**
 * An external switch named by spark.switchml.switch.address (with a test registrar) that is stopped
 * during the run: the fallback computes treeAggregate's result and is counted, or the call fails with a
 * clear error, within the configured bound.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SwitchUnreachableTest {
    private static final int DIM = 3_000;
    private static JavaSparkContext jsc;
    private static JavaRDD<double[]> rows;

    @BeforeAll
    static void start() {
        TestRegistrar.blind = false;
        TestRegistrar.target = SoftwareSwitch.start(SwitchOptions.loopback(2));
        final SparkConf conf = SparkTestSupport.conf("switchml-unreachable", "local[4]", true)
                .set(
                        "spark.switchml.switch.address",
                        TestRegistrar.target.address().toString())
                .set("spark.switchml.registrar", TestRegistrar.class.getName())
                // Through the switch, which these tests stop, though one executor could sum in memory.
                .set("spark.switchml.localShortcut", "false");
        jsc = new JavaSparkContext(conf);
        rows = SparkTestSupport.rows(jsc, Seeds.seed("unreachable rows", 51), 24, DIM, 4)
                .cache();
    }

    @AfterAll
    static void stop() {
        jsc.stop();
        if (TestRegistrar.target != null) {
            TestRegistrar.target.close();
        }
        TestRegistrar.blind = false;
        TestRegistrar.target = null;
    }

    /** A short bound for the unreachable cases only: registration overlaps the first result's wait. */
    @BeforeEach
    void shortTimeoutAfterTheFirstTest(final TestInfo info) {
        final boolean first = info.getTestMethod()
                .map(m -> m.getName().startsWith("theExternal"))
                .orElse(false);
        jsc.setLocalProperty("spark.switchml.resultTimeout", first ? null : "1s");
    }

    private static DriverRuntime runtime() {
        return DriverRuntimes.forContext(jsc.sc());
    }

    @Test
    @Order(1)
    void theExternalSwitchNamedByConfigAggregates() {
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), DIM, new double[DIM], SparkTestSupport::addRow);
        assertTrue(r.viaSwitch(), r.fallbackReason());
        assertEquals(TestRegistrar.target.address(), runtime().switchAddress());
        // Exact sums (the default): each partition's fold a term, quantized with the exponents over all of them.
        assertArrayEquals(
                Reference.fp64(SparkTestSupport.partials(rows, DIM), StagePlans.BEST_SOFTWARE_K), r.sum(), 0.0);
    }

    @Test
    @Order(2)
    void aStoppedSwitchFallsBackToTreeAggregateOnceAndCountsIt() {
        TestRegistrar.target.close();
        TestRegistrar.target = null;
        final long before = runtime().fallbackCount();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), DIM, new double[DIM], SparkTestSupport::addRow);
        assertFalse(r.viaSwitch());
        assertTrue(r.fallbackReason().contains("registration"), r.fallbackReason());
        assertEquals(before + 1, runtime().fallbackCount());
        // treeAggregate merges partials in task-completion order, so two runs may differ in the last bits.
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rows.rdd(), new double[DIM], SparkTestSupport::addRow),
                r.sum(),
                32,
                1e-12);
    }

    @Test
    @Order(3)
    void aSilentDataplaneFallsBackAfterTheResultTimeout() {
        TestRegistrar.blind = true; // registration "succeeds", but nothing listens on the lane ports
        try {
            final long before = runtime().fallbackCount();
            final SwitchMLAggregator.Result r =
                    SwitchMLAggregator.aggregateWithInfo(rows.rdd(), DIM, new double[DIM], SparkTestSupport::addRow);
            assertFalse(r.viaSwitch());
            assertTrue(r.fallbackReason().contains("no result"), r.fallbackReason());
            assertEquals(before + 1, runtime().fallbackCount());
            SparkTestSupport.assertWithinBlockRelative(
                    SwitchMLAggregator.treeAggregate(rows.rdd(), new double[DIM], SparkTestSupport::addRow),
                    r.sum(),
                    32,
                    1e-12);
        } finally {
            TestRegistrar.blind = false;
        }
    }

    @Test
    @Order(4)
    void withFallbackFailTheCallFailsWithAClearErrorWithinTheBound() {
        jsc.setLocalProperty("spark.switchml.fallback", "fail");
        TestRegistrar.blind = true;
        try {
            final long before = runtime().fallbackCount();
            final long t0 = System.nanoTime();
            final SwitchMLException e = assertThrows(
                    SwitchMLException.class,
                    () -> SwitchMLAggregator.aggregate(rows, DIM, new double[DIM], SparkTestSupport::addRow));
            final double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.println("[unreachable] failed after " + seconds + " s: " + e.getMessage());
            assertTrue(
                    e.getMessage().contains("unreachable")
                            && e.getMessage().contains("spark.switchml.fallback=fail")
                            && e.getMessage().contains("within 1000 ms"),
                    e.getMessage());
            // The bound is the result timeout (1 s) plus Spark's scheduling; generous so a busy machine passes.
            assertTrue(seconds < 60, "took " + seconds + " s");
            assertEquals(before, runtime().fallbackCount());
        } finally {
            TestRegistrar.blind = false;
            jsc.setLocalProperty("spark.switchml.fallback", null);
        }
    }
}

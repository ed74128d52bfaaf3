package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StagePlans;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;

/** Without spark.plugins, a local master starts an embedded switch in the driver JVM by itself. */
class NoPluginLocalTest {
    private static JavaSparkContext jsc;

    @BeforeAll
    static void start() {
        // Through the embedded switch, which this test is about, though one executor could sum in memory.
        jsc = new JavaSparkContext(SparkTestSupport.conf("switchml-noplugin", "local[2]", false)
                .set("spark.switchml.localShortcut", "false"));
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @Test
    void aLocalMasterNeedsNoSetUp() {
        final int dim = 1_000;
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, Seeds.seed("no plugin", 61), 10, dim, 2)
                .cache();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertTrue(r.viaSwitch());
        assertTrue(DriverRuntimes.forContext(jsc.sc()).registrar() instanceof EmbeddedSwitchRegistrar);
        // One executor (this JVM) is the switch's only worker; loopback gets the large packets. With exact sums (the
        // default) each partition's fold is a term of its own, quantized with the exponents over all of them.
        assertArrayEquals(
                Reference.fp64(SparkTestSupport.partials(rows, dim), StagePlans.BEST_SOFTWARE_K), r.sum(), 0.0);
    }
}

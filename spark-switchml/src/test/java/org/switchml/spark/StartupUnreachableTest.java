package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.testing.Seeds;

/**
 * A job service address where nothing listens does not stop SparkContext: the context starts, the first
 * aggregation falls back (spark.switchml.fallback=treeAggregate) and says what was tried and how it
 * failed ("connection refused at host:port").
 */
class StartupUnreachableTest {
    private static JavaSparkContext jsc;
    private static int deadPort;

    @BeforeAll
    static void start() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort(); // closed again below: nothing listens there
        }
        final Path token = Files.writeString(Files.createTempFile("switchml-token", ""), "startup-unreachable-token\n");
        jsc = new JavaSparkContext(SparkTestSupport.conf("switchml-startup-unreachable", "local[2]", true)
                .set("spark.switchml.jobService.address", "127.0.0.1:" + deadPort)
                .set("spark.switchml.auth.tokenFile", token.toString()));
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @Test
    void theContextStartsAndTheFirstAggregationFallsBackNamingWhatWasTried() {
        final DriverRuntime rt = DriverRuntimes.forContext(jsc.sc());
        final String why = rt.unreachableReason();
        assertTrue(
                why != null && why.contains("job service 127.0.0.1:" + deadPort) && why.contains("UNAVAILABLE"), why);
        final int dim = 500;
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, Seeds.seed("startup unreachable", 91), 8, dim, 3);
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertFalse(r.viaSwitch());
        assertTrue(r.fallbackReason().contains("job service at 127.0.0.1:" + deadPort), r.fallbackReason());
        assertEquals(1, rt.fallbackCount());
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rows.rdd(), new double[dim], SparkTestSupport::addRow),
                r.sum(),
                1,
                1e-12);
    }
}

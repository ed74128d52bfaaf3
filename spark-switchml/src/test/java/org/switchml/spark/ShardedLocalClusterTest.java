package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StagePlans;
import org.switchml.testing.Seeds;

/**
 * Three executor JVMs with no switch configured (local-cluster[3,1,768]) and the driver as an extra shard host:
 * a stage runs on four switch shards, one in each executor and one in the driver, and sums bit for bit what the
 * driver's one switch sums for the same data; every shard reports its counters; a failed task retries the stage
 * on new registrations of every shard.
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ShardedLocalClusterTest {
    private static JavaSparkContext jsc;

    @BeforeAll
    static void start() {
        final SparkConf conf = SparkTestSupport.localCluster("switchml-sharded", "local-cluster[3,1,768]")
                .set("spark.switchml.shards.extraHosts", "driver");
        jsc = new JavaSparkContext(conf);
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    private static DriverRuntime driver() {
        return DriverRuntimes.forContext(jsc.sc());
    }

    @Test
    void fourShardsSumBitForBitWhatTheDriversSwitchSums() {
        final int dim = 100_003;
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, Seeds.seed("sharded sum", 81), 90, dim, 9)
                .cache();
        rows.count();
        final SwitchMLAggregator.Result sharded =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        jsc.setLocalProperty("spark.switchml.switch.placement", "driver");
        final SwitchMLAggregator.Result hub;
        try {
            hub = SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        } finally {
            jsc.setLocalProperty("spark.switchml.switch.placement", null);
        }
        assertTrue(sharded.viaSwitch() && hub.viaSwitch(), sharded.fallbackReason() + " / " + hub.fallbackReason());
        assertEquals(3, sharded.workers());
        assertEquals(4, sharded.shards(), "a shard on each executor and one on the driver");
        assertEquals(1, hub.shards(), "placement=driver: the driver's switch alone");
        // The same tasks in the same executors, the same k: the same blocks, exponents and integer sums.
        assertArrayEquals(hub.sum(), sharded.sum(), 0.0, "the shards' sum differs from the switch's");
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rows.rdd(), new double[dim], SparkTestSupport::addRow),
                sharded.sum(),
                StagePlans.BEST_SOFTWARE_K / 2,
                1e-12);
        // Every shard reported its part's counters: each worker sent every block of the vector once, plus each
        // shard's look-ahead packets, split among the four.
        final JobCounters c = driver().finalCounters(sharded.jobId());
        assertNotNull(c, "no shard reported its counters");
        final long blocks = (dim + StagePlans.BEST_SOFTWARE_K / 2 - 1) / (StagePlans.BEST_SOFTWARE_K / 2);
        final long sent = c.packetsIn() - c.retransmissions();
        assertTrue(sent >= 3 * blocks && sent <= 3 * (blocks + 4L * 128), "packets in from 3 workers: " + c);
        System.out.println("[sharded] counters over the four shards: " + c);
    }

    @Test
    void aFailedTaskRunsTheStageAgainOnNewRegistrationsOfEveryShard() {
        final int dim = 8;
        final JavaRDD<double[]> data = SparkAggregationTest.regression(jsc, Seeds.seed("sharded loop", 82), 300, dim)
                .repartition(3)
                .cache();
        data.count();
        final ReplicatedLoop.Options opts = new ReplicatedLoop.Options(6, 0, 0);
        final ReplicatedLoop.Result viaShards =
                ReplicatedLoop.run(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, 3), opts);
        final ReplicatedLoop.Result onDriver =
                ReplicatedLoop.runOnDriver(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), opts);
        assertTrue(viaShards.viaSwitch());
        assertEquals(
                List.of(0, 1),
                driver().generationsOf(viaShards.jobIds().get(0)).stream()
                        .distinct()
                        .toList());
        SparkTestSupport.assertWithinBlockRelative(onDriver.state(), viaShards.state(), dim, 1e-10);
    }
}

package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StagePlans;
import org.switchml.testing.Seeds;

/**
 * Two executor JVMs (local-cluster[2,2,1024]): the plugin hands them the switch address, tasks in
 * different JVMs aggregate through the driver's embedded switch, and a failed task retries the stage.
 * Needs SPARK_HOME with jars/ (surefire sets it to target/spark-home).
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
class LocalClusterTest {
    private static JavaSparkContext jsc;

    @BeforeAll
    static void start() {
        final SparkConf conf = SparkTestSupport.localCluster("switchml-local-cluster", "local-cluster[2,2,1024]");
        jsc = new JavaSparkContext(conf);
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @Test
    void executorsInOtherJvmsSumThroughTheSwitchAsTreeAggregateDoes() {
        final int dim = 20_000;
        // 200 partitions on 4 task slots: two executors, each one worker of the switch job.
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, Seeds.seed("local-cluster sum", 71), 400, dim, 200)
                .cache();
        rows.count();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertTrue(r.viaSwitch(), r.fallbackReason());
        final long executorJvms = jsc.sc().getExecutorMemoryStatus().size() - 1; // minus the driver
        assertEquals(2, executorJvms);
        assertEquals(2, r.workers(), "one switch worker per executor");
        // fp64: the quantization error is far below 1e-12 of each block's maximum (docs/protocol.md section 5).
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rows.rdd(), new double[dim], SparkTestSupport::addRow),
                r.sum(),
                StagePlans.BEST_SOFTWARE_K / 2,
                1e-12);
    }

    @Test
    void theReplicatedLoopSurvivesATaskFailureAcrossJvms() {
        final int dim = 8;
        final JavaRDD<double[]> data = SparkAggregationTest.regression(
                        jsc, Seeds.seed("local-cluster loop", 72), 200, dim)
                .cache();
        final ReplicatedLoop.Options opts = new ReplicatedLoop.Options(6, 0, 0);
        final ReplicatedLoop.Result viaSwitch =
                ReplicatedLoop.run(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, 3), opts);
        final ReplicatedLoop.Result onDriver =
                ReplicatedLoop.runOnDriver(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), opts);
        assertTrue(viaSwitch.viaSwitch());
        // Attempt 0 failed, attempt 1 ran as generation 1. (Generation 0 may have been installed twice: ahead
        // of the tasks for the executors the driver knew, then again if an executor had not yet announced
        // its worker socket.)
        assertEquals(
                List.of(0, 1),
                DriverRuntimes.forContext(jsc.sc())
                        .generationsOf(viaSwitch.jobIds().get(0))
                        .stream()
                        .distinct()
                        .toList());
        SparkTestSupport.assertWithinBlockRelative(onDriver.state(), viaSwitch.state(), dim, 1e-10);
    }
}

package org.switchml.spark.driver;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Where a switch stage finds its source cached. The stage's plan gives each cached partition to a task on
 * the executor that holds it; that needs the block locations as they are when the stage starts, also right
 * after the job that cached them (when Spark's scheduler has not looked again).
 */
@Timeout(120)
class CachedLocationsTest {
    private static JavaSparkContext jsc;

    @BeforeAll
    static void start() {
        jsc = new JavaSparkContext(new SparkConf(false)
                .setMaster("local[2]")
                .setAppName("switchml-cached-locations")
                .set("spark.ui.enabled", "false"));
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @Test
    void partitionsCachedByTheLastJobAreFoundWhereTheyAre() {
        final int parts = 6;
        final List<Integer> data = IntStream.range(0, 600).boxed().toList();
        final JavaRDD<Integer> cached =
                jsc.parallelize(data, parts).map(x -> x * 2).cache();
        final String[] none = new String[parts];
        assertArrayEquals(
                none, StageLauncher.preferredExecutors(jsc.sc(), cached.rdd(), parts), "nothing is cached yet");
        cached.count(); // the job that caches every partition; no job runs after it
        final String[] driver = new String[parts];
        Arrays.fill(driver, "driver"); // local mode: the driver is the only executor
        assertArrayEquals(
                driver,
                StageLauncher.preferredExecutors(jsc.sc(), cached.rdd(), parts),
                "every partition is cached in the one executor");
        // A narrow child of the cached RDD is read where its parent is cached.
        final JavaRDD<Integer> child = cached.map(x -> x + 1);
        assertArrayEquals(driver, StageLauncher.preferredExecutors(jsc.sc(), child.rdd(), parts));
    }
}

package org.switchml.spark.ml.linear;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.testing.Seeds;

/** How an objective's copies in tasks get the fit's standardization: from their executor, else the broadcast. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StandardizationTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("StandardizationTest")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /**
     * The objective's copies in tasks carry no per-feature statistics: each takes those its executor kept,
     * else reads the broadcast, and both give the driver's arrays bit for bit.
     */
    @Test
    void objectiveCopiesTakeTheKeptStatisticsElseTheBroadcast() throws Exception {
        final long seed = Seeds.seed("objectiveCopies", 33);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int f = 100_000;
        final double[] mean = new double[f];
        final double[] std = new double[f];
        for (int j = 0; j < f; j++) {
            mean[j] = rnd.nextDouble(-3, 3);
            std[j] = j % 7 == 0 ? 0.0 : rnd.nextDouble(0.01, 5); // constant features have std 0
        }
        final JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        final org.apache.spark.broadcast.Broadcast<MeanStd> statistics = jsc.broadcast(new MeanStd(mean, std));
        try {
            final String keptKey = "test/kept/" + seed;
            ExecutorStatistics.keep(keptKey, new MeanStd(mean.clone(), std.clone()));
            final LogisticObjective kept = LogisticObjective.of(
                    f, 3, true, true, true, 0.5, true, Standardization.kept(keptKey, statistics, mean, std));
            final LogisticObjective notKept = LogisticObjective.of(
                    f,
                    3,
                    true,
                    true,
                    true,
                    0.5,
                    true,
                    Standardization.kept("test/not-kept/" + seed, statistics, mean, std));
            final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
            try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
                out.writeObject(kept);
            }
            System.out.printf("[objective copies] seed %d: %d features serialize to %d bytes%n", seed, f, bytes.size());
            assertTrue(bytes.size() < 10_000, "serialized objective: " + bytes.size() + " bytes");

            final long before = ExecutorStatistics.misses();
            final List<double[]> fromKept = jsc.parallelize(List.of(1, 2), 2)
                    .map(i -> kept.inverseStd())
                    .collect();
            assertEquals(before, ExecutorStatistics.misses(), "kept statistics: no broadcast read");
            final List<double[]> fromBroadcast = jsc.parallelize(List.of(1, 2), 2)
                    .map(i -> notKept.inverseStd())
                    .collect();
            assertEquals(before + 2, ExecutorStatistics.misses(), "each task's copy read the broadcast");
            for (final double[] copy :
                    List.of(fromKept.get(0), fromKept.get(1), fromBroadcast.get(0), fromBroadcast.get(1))) {
                assertArrayEquals(kept.inverseStd(), copy);
            }
            assertEquals(0.0, kept.inverseStd()[0]);
        } finally {
            statistics.destroy();
        }
    }
}

package org.switchml.spark;

import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.LabeledPoint;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import org.switchml.testing.Seeds;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plugin's metrics reach Spark's own sinks: with Spark's CSV sink configured, a fit of the drop-in estimator
 * and a few aggregations through the switch show up as allreduces, bytes, packets, an allreduce-time histogram,
 * the switch's counters and zero fallbacks, read back from the files the sink wrote.
 */
@Timeout(180)
class MetricsTest {
    private static final String SOURCE = "plugin." + SwitchMLPlugin.class.getName() + ".";
    private static Path sinkDir;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        sinkDir = Files.createTempDirectory("switchml-metrics");
        spark = SparkSession.builder().config(SparkTestSupport.conf("switchml-metrics", "local[2]", true)
                        // Through the switch: one executor would otherwise sum in memory and send no packet.
                        .set("spark.switchml.localShortcut", "false")
                        .set("spark.metrics.conf.*.sink.csv.class", "org.apache.spark.metrics.sink.CsvSink")
                        .set("spark.metrics.conf.*.sink.csv.directory", sinkDir.toString())
                        .set("spark.metrics.conf.*.sink.csv.period", "1")
                        .set("spark.metrics.conf.*.sink.csv.unit", "minutes"))
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    @Test
    void aFitAndAggregationsShowUpInSparksCsvSink() {
        final long seed = Seeds.seed("metrics", 91);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        final int dim = 5_000;
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, seed, 40, dim, 4).cache();
        for (int i = 0; i < 3; i++) {
            assertTrue(SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow)
                    .viaSwitch());
        }
        final List<LabeledPoint> points = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            final double[] x = {rnd.nextGaussian(), rnd.nextGaussian(), rnd.nextGaussian()};
            points.add(new LabeledPoint(x[0] - 0.5 * x[1] + 0.3 * rnd.nextGaussian() > 0 ? 1 : 0, Vectors.dense(x)));
        }
        final Dataset<Row> data = spark.createDataFrame(points, LabeledPoint.class).repartition(4);
        final LogisticRegressionModel model = new SwitchMLLogisticRegression().setMaxIter(10).fit(data);
        final int iterations = model.summary().totalIterations();

        SparkEnv.get().metricsSystem().report(); // the sinks write now, not at their next period
        final long allreduces = last("allreduces")[0];
        assertTrue(allreduces >= 3 + iterations, allreduces + " allreduces for 3 aggregations and a fit of "
                + iterations + " iterations");
        assertTrue(last("allreduceBytes")[0] >= 3L * dim * Double.BYTES, "allreduceBytes " + last("allreduceBytes")[0]);
        final long[] times = last("allreduceTimeMicros");
        assertEquals(allreduces, times[0], "one allreduce time per allreduce (histogram count)");
        assertTrue(times[1] > 0, "the slowest allreduce took " + times[1] + " µs");
        assertTrue(last("worker.packetsSent")[0] > 0, "no packet sent");
        assertTrue(last("switch.packetsIn")[0] > 0, "the switch's counters of finished jobs");
        assertEquals(0, last("fallbacks")[0]);
        assertEquals(0, last("switch.drops.BAD_SECRET")[0]);
        System.out.println("[metrics] seed " + seed + ": " + allreduces + " allreduces, " + iterations
                + " iterations, max " + times[1] + " µs, " + last("worker.packetsSent")[0] + " packets");
    }

    /** The last row of the sink's file for {@code metric}, without its timestamp column. */
    private static long[] last(final String metric) {
        final String suffix = SOURCE + metric + ".csv";
        try (Stream<Path> files = Files.list(sinkDir)) {
            final List<Path> matches = files.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
            assertEquals(1, matches.size(), "files for " + metric + " in " + sinkDir + ": " + matches);
            final List<String> lines = Files.readAllLines(matches.get(0));
            assertTrue(lines.size() >= 2, matches.get(0) + " has no rows");
            final String[] cells = lines.get(lines.size() - 1).split(",");
            final long[] out = new long[cells.length - 1];
            for (int i = 1; i < cells.length; i++) {
                out[i - 1] = (long) Double.parseDouble(cells[i]);
            }
            return out;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

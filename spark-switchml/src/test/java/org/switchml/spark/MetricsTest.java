package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.Counter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.metrics.source.Source;
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
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import org.switchml.testing.Seeds;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The plugin's metrics reach Spark's own sinks: with Spark's CSV sink configured, a fit of the drop-in estimator
 * and a few aggregations through the switch show up as counters of allreduces, bytes, packets, the switch's
 * counters and zero fallbacks, and a timer of the allreduces, read back from the files the sink wrote; the
 * switch's counters count a job while it runs.
 */
@Timeout(180)
class MetricsTest {
    private static final String SOURCE = "plugin." + SwitchMLPlugin.class.getName() + ".";
    private static Path sinkDir;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        sinkDir = Files.createTempDirectory("switchml-metrics");
        spark = SparkSession.builder()
                .config(SparkTestSupport.conf("switchml-metrics", "local[2]", true)
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
        final JavaRDD<double[]> rows =
                SparkTestSupport.rows(jsc, seed, 40, dim, 4).cache();
        for (int i = 0; i < 3; i++) {
            assertTrue(SwitchMLAggregator.aggregateWithInfo(rows.rdd(), dim, new double[dim], SparkTestSupport::addRow)
                    .viaSwitch());
        }
        final List<LabeledPoint> points = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            final double[] x = {rnd.nextGaussian(), rnd.nextGaussian(), rnd.nextGaussian()};
            points.add(new LabeledPoint(x[0] - 0.5 * x[1] + 0.3 * rnd.nextGaussian() > 0 ? 1 : 0, Vectors.dense(x)));
        }
        final Dataset<Row> data =
                spark.createDataFrame(points, LabeledPoint.class).repartition(4);

        // While the fit runs (one switch job for the whole fit), the driver's switch counters already count its
        // packets: more than the finished jobs' totals, read before and after the counter with no job finishing
        // in between.
        final DriverRuntime rt = DriverRuntimes.forContext(spark.sparkContext());
        final Counter packetsIn = driverCounter("switch.packetsIn");
        final List<String> live = new CopyOnWriteArrayList<>(); // written on the listener's thread
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
        lr.setListener(report -> {
            if (report.iteration() >= 1 && live.isEmpty()) {
                final long finishedBefore = rt.removedJobTotals().packetsIn();
                final long counted = packetsIn.getCount();
                final long finishedAfter = rt.removedJobTotals().packetsIn();
                if (finishedBefore == finishedAfter && counted > finishedAfter) {
                    live.add("iteration " + report.iteration() + ": " + counted + " packets in, " + finishedAfter
                            + " of them from finished jobs");
                }
            }
        });
        final LogisticRegressionModel model = lr.setMaxIter(10).setTol(0).fit(data);
        final int iterations = model.summary().totalIterations();
        assertEquals(1, live.size(), "the switch's counters did not count the running fit's packets");

        SparkEnv.get().metricsSystem().report(); // the sinks write now, not at their next period
        final long allreduces = last("allreduces")[0];
        assertTrue(
                allreduces >= 3 + iterations,
                allreduces + " allreduces for 3 aggregations and a fit of " + iterations + " iterations");
        assertTrue(last("allreduceBytes")[0] >= 3L * dim * Double.BYTES, "allreduceBytes " + last("allreduceBytes")[0]);
        // A timer: count, then max in the sink's duration unit (ms), with rates.
        final String[] timer = lastRow("allreduceTime");
        assertEquals(allreduces, Long.parseLong(timer[1]), "one allreduce time per allreduce (the timer's count)");
        assertTrue(Double.parseDouble(timer[2]) > 0, "the slowest allreduce took " + timer[2] + " ms");
        assertTrue(header("allreduceTime").contains("mean_rate"), header("allreduceTime"));
        assertTrue(last("worker.packetsSent")[0] > 0, "no packet sent");
        assertTrue(last("switch.packetsIn")[0] > 0, "the switch's counters");
        assertEquals(0, last("fallbacks")[0]);
        assertEquals(0, last("switch.drops.BAD_SECRET")[0]);
        // Counters, not gauges: Spark's CSV sink writes a counter's count, a gauge's value.
        for (final String counter : List.of(
                "allreduces",
                "allreduceBytes",
                "worker.packetsSent",
                "worker.retransmissions",
                "fallbacks",
                "switch.packetsIn",
                "switch.packetsOut",
                "switch.retransmissions",
                "switch.drops.BAD_SECRET")) {
            assertEquals("t,count", header(counter), counter);
        }
        System.out.println("[metrics] seed " + seed + ": " + allreduces + " allreduces, " + iterations
                + " iterations, max " + timer[2] + " ms, " + last("worker.packetsSent")[0] + " packets; live: " + live);
    }

    /** The driver's counter {@code name} in the plugin's metrics source. */
    private static Counter driverCounter(final String name) {
        final List<Counter> found = new ArrayList<>();
        for (final Source s : CollectionConverters.asJava(
                SparkEnv.get().metricsSystem().getSourcesByName("plugin." + SwitchMLPlugin.class.getName()))) {
            final Counter c = s.metricRegistry().getCounters().get(name);
            if (c != null) {
                found.add(c);
            }
        }
        assertEquals(1, found.size(), "counters named " + name);
        return found.get(0);
    }

    /** The last row of the sink's file for {@code metric}, without its timestamp column, as numbers. */
    private static long[] last(final String metric) {
        final String[] cells = lastRow(metric);
        final long[] out = new long[cells.length - 1];
        for (int i = 1; i < cells.length; i++) {
            out[i - 1] = (long) Double.parseDouble(cells[i]);
        }
        return out;
    }

    /** The last row of the sink's file for {@code metric}, its cells as written. */
    private static String[] lastRow(final String metric) {
        final List<String> lines = lines(metric);
        assertTrue(lines.size() >= 2, metric + " has no rows");
        return lines.get(lines.size() - 1).split(",");
    }

    /** The header line of the sink's file for {@code metric}. */
    private static String header(final String metric) {
        return lines(metric).get(0);
    }

    private static List<String> lines(final String metric) {
        final String suffix = SOURCE + metric + ".csv";
        try (Stream<Path> files = Files.list(sinkDir)) {
            final List<Path> matches = files.filter(
                            p -> p.getFileName().toString().endsWith(suffix))
                    .toList();
            assertEquals(1, matches.size(), "files for " + metric + " in " + sinkDir + ": " + matches);
            return Files.readAllLines(matches.get(0));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

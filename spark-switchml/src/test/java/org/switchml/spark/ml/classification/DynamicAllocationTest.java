package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLAggregator;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.spark.SwitchMLPlugin;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;
import scala.Function1;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;

/**
 * Dynamic allocation on a real cluster (local-cluster[2,1,1024], two executor JVMs, the plugin on, shuffle
 * tracking, two executors at least and at most), where Spark refuses barrier stages: the estimator trains with stock MLlib and says why once, the aggregator falls back to
 * treeAggregate (or fails, as spark.switchml.fallback says), the replicated loop fails naming the setting.
 * Needs SPARK_HOME with jars/ (surefire sets it to target/spark-home).
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class DynamicAllocationTest {
    private static final String SETTING = "spark.dynamicAllocation.enabled";
    private static SparkSession spark;
    private static JavaSparkContext jsc;
    private static Capture warnings;

    /** The warnings of spark-switchml's loggers, as they are logged. */
    private static final class Capture extends AbstractAppender {
        private final List<String[]> events = new CopyOnWriteArrayList<>();

        Capture() {
            super("switchml-warnings", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(final LogEvent event) {
            if (event.getLevel().isMoreSpecificThan(Level.WARN)
                    && event.getLoggerName().startsWith("org.switchml")) {
                events.add(
                        new String[] {event.getLoggerName(), event.getMessage().getFormattedMessage()});
            }
        }

        /** The warnings of {@code logger} that name {@code text}. */
        List<String> naming(final Class<?> logger, final String text) {
            final List<String> out = new ArrayList<>();
            for (final String[] e : events) {
                if (e[0].equals(logger.getName()) && e[1].contains(text)) {
                    out.add(e[1]);
                }
            }
            return out;
        }
    }

    @BeforeAll
    static void start() {
        final Path target = Path.of("target").toAbsolutePath();
        spark = SparkSession.builder()
                .master("local-cluster[2,1,1024]")
                .appName("switchml-dynamic-allocation")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.plugins", SwitchMLPlugin.class.getName())
                .config("spark.executor.memory", "512m")
                .config(
                        "spark.executor.extraClassPath",
                        target.resolve("classes") + ":" + target.resolve("test-classes"))
                .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .config(SETTING, "true")
                .config("spark.dynamicAllocation.shuffleTracking.enabled", "true")
                // A fixed count under dynamic allocation is refused all the same, and keeps both executors for the
                // whole class instead of starting them again after an idle minute.
                .config("spark.dynamicAllocation.minExecutors", "2")
                .config("spark.dynamicAllocation.maxExecutors", "2")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        warnings = new Capture();
        warnings.start();
        final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().getRootLogger().addAppender(warnings, Level.WARN, null);
        ctx.updateLoggers();
    }

    @AfterAll
    static void stop() {
        if (warnings != null) {
            final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
            ctx.getConfiguration().getRootLogger().removeAppender(warnings.getName());
            ctx.updateLoggers();
            warnings.stop();
        }
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void sparkItselfRefusesABarrierStage() {
        // What the library's rule mirrors (docs/spark.md): the barrier job fails as its stage is created.
        final RDD<Integer> rdd = jsc.parallelize(List.of(1, 2, 3, 4), 2).rdd();
        @SuppressWarnings("unchecked")
        final Function1<Iterator<Integer>, Iterator<Integer>> identity =
                (Function1<Iterator<Integer>, Iterator<Integer>> & Serializable) it -> it;
        final Exception e = assertThrows(
                Exception.class,
                () -> rdd.barrier()
                        .mapPartitions(identity, false, ClassTag$.MODULE$.apply(Integer.class))
                        .collect());
        assertEquals("BarrierJobRunWithDynamicAllocationException", e.getClass().getSimpleName(), e.toString());
        assertTrue(e.getMessage().contains(SETTING), e.getMessage());
        assertTrue(SwitchMLDriver.barrierStagesRefused(spark.sparkContext())
                .orElse("")
                .contains(SETTING));
    }

    @Test
    void theEstimatorTrainsAsStockMllibAndSaysWhyOnce() {
        final long seed = Seeds.seed("dynamic allocation estimator", 91);
        final Dataset<Row> data = MllibParity.frame(
                spark, LrData.generate(seed, 300, 5, 2, false, 1.0).rows(), 4);
        final SwitchMLLogisticRegression ours = new SwitchMLLogisticRegression();
        ours.setRegParam(0.01).setMaxIter(15);
        final LogisticRegressionModel viaOurs = ours.fit(data);
        final FitReport report = ours.lastFit();
        final LogisticRegressionModel stock =
                new LogisticRegression().setRegParam(0.01).setMaxIter(15).fit(data);

        assertFalse(report.viaSwitch(), report.toString());
        assertTrue(report.reason().startsWith("stock MLlib") && report.reason().contains(SETTING), report.reason());
        assertEquals(stock.summary().totalIterations(), report.loop().iterations());
        // The same code path (MLlib's own train): the only freedom left is the order in which treeAggregate
        // merges the partitions' sums, which can move the last bits of a gradient.
        final double[] expected = MllibParity.flatten(stock);
        final double[] actual = MllibParity.flatten(viaOurs);
        double scale = 0;
        double maxDiff = 0;
        for (int i = 0; i < expected.length; i++) {
            scale = Math.max(scale, Math.abs(expected[i]));
            maxDiff = Math.max(maxDiff, Math.abs(expected[i] - actual[i]));
        }
        System.out.println("[dynamic allocation] largest coefficient difference from stock MLlib: " + maxDiff
                + " (largest coefficient " + scale + ")");
        assertTrue(scale > 0.1, "a model that learned something: largest coefficient " + scale);
        assertTrue(maxDiff <= 1e-10 * scale, "difference " + maxDiff + " > 1e-10 x " + scale);

        // A second fit in the same application trains the same way without another warning.
        ours.setMaxIter(3).fit(data);
        assertFalse(ours.lastFit().viaSwitch());
        final List<String> said = warnings.naming(SwitchMLLogisticRegression.class, SETTING);
        assertEquals(1, said.size(), said.toString());
        assertTrue(said.get(0).contains(SETTING + "=false"), said.get(0));
    }

    @Test
    void theAggregatorFallsBackAsConfigured() {
        final long seed = Seeds.seed("dynamic allocation aggregator", 92);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int dim = 64;
        final List<double[]> rows = new ArrayList<>();
        for (int r = 0; r < 200; r++) {
            final double[] row = new double[dim];
            for (int i = 0; i < dim; i++) {
                row[i] = rnd.nextInt(-1000, 1000); // integers: every order of summation gives the same bits
            }
            rows.add(row);
        }
        final JavaRDD<double[]> rdd = jsc.parallelize(rows, 6).cache();
        final SwitchMLDriver driver = SwitchMLDriver.of(jsc.sc());
        final long before = driver.fallbackCount();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], DynamicAllocationTest::add);
        assertFalse(r.viaSwitch());
        assertTrue(r.fallbackReason().contains(SETTING), r.fallbackReason());
        assertEquals(before + 1, driver.fallbackCount());
        assertArrayEquals(
                SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], DynamicAllocationTest::add), r.sum(), 0.0);
        final List<String> said = warnings.naming(SwitchMLAggregator.class, SETTING);
        assertEquals(1, said.size(), said.toString());

        jsc.setLocalProperty("spark.switchml.fallback", "fail");
        try {
            final SwitchMLException e = assertThrows(
                    SwitchMLException.class,
                    () -> SwitchMLAggregator.aggregate(rdd, dim, new double[dim], DynamicAllocationTest::add));
            assertTrue(
                    e.getMessage().contains(SETTING + "=true")
                            && e.getMessage().contains("spark.switchml.fallback=fail"),
                    e.getMessage());
            assertEquals(before + 1, driver.fallbackCount(), "a failed call is no fallback");
        } finally {
            jsc.setLocalProperty("spark.switchml.fallback", null);
        }
    }

    @Test
    void theReplicatedLoopFailsNamingTheSetting() {
        final JavaRDD<double[]> data = jsc.parallelize(List.of(new double[] {1}, new double[] {2}), 2);
        final IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> ReplicatedLoop.run(data, new double[1], 1, new Count(), new ReplicatedLoop.Options(3, 0, 0)));
        assertTrue(e.getMessage().contains(SETTING + "=true") && e.getMessage().contains("barrier"), e.getMessage());
    }

    private static double[] add(final double[] acc, final double[] row) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += row[i];
        }
        return acc;
    }

    /** Counts the records, once per iteration. */
    private static final class Count implements ReplicatedLoop.Body<double[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public double[] contribution(final List<double[]> records, final double[] state, final int iteration) {
            return new double[] {records.size()};
        }

        @Override
        public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
            return new ReplicatedLoop.Step(sum.clone(), null, false);
        }
    }
}

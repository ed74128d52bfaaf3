package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.regression.LinearRegressionModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.status.api.v1.ExecutorSummary;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.spark.ml.regression.SwitchMLLinearRegression;
import org.switchml.testing.Seeds;

/**
 * The same bits, run after run, whatever the placement: on a local-cluster of three executor JVMs, each estimator
 * fits the same six partitions (a) as they come, (b) with the partitions in another order, so that other executors
 * read them, and (c) after one executor is gone, on two executors (two barrier tasks, each reading three
 * partitions). With exact sums (the default) every fit's coefficients and intercepts are bit-identical; the float
 * path's fits of (a) and (b) are printed beside them (they may part in the last bits). Needs SPARK_HOME with jars/
 * (surefire sets it to target/spark-home).
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class SameBitsTest {
    private static final int PARTITIONS = 6;
    private static final int[] SHUFFLED = {3, 5, 0, 4, 1, 2};
    private static final StructType SCHEMA = new StructType(new StructField[] {
        new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("weight", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())
    });

    private static SparkSession spark;
    private static List<List<Instance>> chunks;

    @BeforeAll
    static void start() throws InterruptedException {
        spark = CrashFits.session("local-cluster[3,1,1024]", "switchml-same-bits", 4, 20_000)
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        awaitExecutors(3);
        final long seed = Seeds.seed("SameBitsTest", 81);
        chunks = LrData.split(LrData.generate(seed, 3000, 12, 2, true, 1.0).rows(), PARTITIONS);
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** Waits (bounded) until {@code n} executors are registered. */
    private static void awaitExecutors(final int n) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (executors().size() != n) {
            assertTrue(
                    System.nanoTime() - deadline < 0,
                    "executors: " + executors().size() + ", expected " + n);
            Thread.sleep(200);
        }
    }

    private static List<String> executors() {
        final List<String> out = new ArrayList<>();
        for (final ExecutorSummary e : scala.jdk.javaapi.CollectionConverters.asJava(
                spark.sparkContext().statusStore().executorList(true))) {
            if (!e.id().equals("driver")) {
                out.add(e.id());
            }
        }
        return out;
    }

    /** The chunks as the partitions of a cached frame, chunk {@code order[i]} in partition i. */
    private static Dataset<Row> frame(final int[] order) {
        final List<List<Row>> parts = new ArrayList<>();
        for (final int c : order) {
            final List<Row> rows = new ArrayList<>();
            for (final Instance in : chunks.get(c)) {
                rows.add(RowFactory.create(in.label(), in.weight(), in.features()));
            }
            parts.add(rows);
        }
        final JavaRDD<Row> rdd = JavaSparkContext.fromSparkContext(spark.sparkContext())
                .parallelize(parts, PARTITIONS)
                .flatMap(List::iterator);
        final Dataset<Row> d = spark.createDataFrame(rdd, SCHEMA).cache();
        assertEquals(PARTITIONS, d.rdd().getNumPartitions());
        d.count();
        return d;
    }

    /** What each estimator's fit gives: coefficients then intercepts, and the report. */
    private record Fit(double[] bits, FitReport report) {}

    private static List<Function<Dataset<Row>, Fit>> estimators() {
        return List.of(
                d -> {
                    final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
                    lr.setRegParam(0.01).setMaxIter(25).setWeightCol("weight");
                    return new Fit(MllibParity.flatten(lr.fit(d)), lr.lastFit());
                },
                d -> {
                    final SwitchMLLinearSVC svc = new SwitchMLLinearSVC();
                    svc.setRegParam(0.01).setMaxIter(25);
                    return new Fit(SwitchMLLinearSVCTest.flatten(svc.fit(d)), svc.lastFit());
                },
                d -> {
                    final SwitchMLLinearRegression lin = new SwitchMLLinearRegression();
                    lin.setSolver("l-bfgs")
                            .setRegParam(0.05)
                            .setElasticNetParam(0.5)
                            .setMaxIter(25);
                    final LinearRegressionModel m = lin.fit(d);
                    final double[] c = m.coefficients().toArray();
                    final double[] out = Arrays.copyOf(c, c.length + 1);
                    out[c.length] = m.intercept();
                    return new Fit(out, lin.lastFit());
                });
    }

    private static final String[] NAMES = {"SwitchMLLogisticRegression", "SwitchMLLinearSVC", "SwitchMLLinearRegression"
    };

    @Test
    void twoAndThreeExecutorsAndShuffledPartitionsGiveTheSameBits() throws InterruptedException {
        final SparkContext sc = spark.sparkContext();
        final int[] natural = {0, 1, 2, 3, 4, 5};
        final Dataset<Row> asTheyCome = frame(natural);
        final Dataset<Row> shuffled = frame(SHUFFLED);
        final List<Function<Dataset<Row>, Fit>> fits = estimators();
        final double[][] three = new double[fits.size()][];
        for (int e = 0; e < fits.size(); e++) {
            final Fit a = fits.get(e).apply(asTheyCome);
            final Fit b = fits.get(e).apply(shuffled);
            System.out.printf("[same bits] %s, 3 executors: %s%n", NAMES[e], a.report());
            assertTrue(a.report().viaSwitch() && b.report().viaSwitch(), NAMES[e] + ": " + b.report());
            assertTrue(a.report().loop().iterations() > 3, NAMES[e] + ": a fit that moved: " + a.report());
            assertArrayEquals(a.bits(), b.bits(), NAMES[e] + ": shuffled partitions, other bits");
            three[e] = a.bits();
            // the float path, for the record
            sc.setLocalProperty("spark.switchml.exactSums", "false");
            try {
                final double[] fa = fits.get(e).apply(asTheyCome).bits();
                final double[] fb = fits.get(e).apply(shuffled).bits();
                System.out.printf(
                        "[same bits] %s, float sums before the switch: shuffled partitions give %s bits "
                                + "(largest difference %.3g)%n",
                        NAMES[e], Arrays.equals(fa, fb) ? "the same" : "other", maxDiff(fa, fb));
            } finally {
                sc.setLocalProperty("spark.switchml.exactSums", null);
            }
        }
        // One executor goes: the next fits run two barrier tasks, each reading three partitions.
        final String gone = executors().get(0);
        assertTrue(
                sc.killExecutors(scala.jdk.javaapi.CollectionConverters.asScala(List.of(gone))
                        .toSeq()),
                "kill executor " + gone);
        awaitExecutors(2);
        sc.setLocalProperty("spark.switchml.slotWaitTimeout", "1s");
        try {
            for (int e = 0; e < fits.size(); e++) {
                final Fit two = fits.get(e).apply(asTheyCome);
                System.out.printf("[same bits] %s, 2 executors: %s%n", NAMES[e], two.report());
                assertTrue(two.report().viaSwitch(), NAMES[e] + ": " + two.report());
                assertArrayEquals(three[e], two.bits(), NAMES[e] + ": two executors, other bits");
            }
        } finally {
            sc.setLocalProperty("spark.switchml.slotWaitTimeout", null);
        }
    }

    private static double maxDiff(final double[] a, final double[] b) {
        double d = 0;
        for (int i = 0; i < a.length; i++) {
            d = Math.max(d, Math.abs(a[i] - b[i]));
        }
        return d;
    }
}

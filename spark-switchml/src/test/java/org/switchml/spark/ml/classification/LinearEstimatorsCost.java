package org.switchml.spark.ml.classification;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.classification.LinearSVC;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.switchml.spark.ml.regression.SwitchMLLinearRegression;
import org.switchml.testing.Seeds;

/**
 * Fit time of SwitchMLLinearSVC and SwitchMLLinearRegression against their stock twins on a local-cluster of two
 * executors (two cores each), communication-bound: sparse rows (30 non-zeros) over 2^18 features, so each
 * evaluation is mostly the sum of a 2 MB gradient; maxIter 10, tol 0, so both sides run the same 10 iterations.
 * Stock and ours alternate, three times each after a warm-up pair; the medians are printed. A measurement, not a
 * check: run it with {@code -Dswitchml.bench=true -Dtest=LinearEstimatorsCost} (docs/benchmarks.md).
 */
@EnabledIfSystemProperty(named = "switchml.bench", matches = "true")
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@Timeout(value = 40, unit = TimeUnit.MINUTES)
class LinearEstimatorsCost {
    private static final int FEATURES = 1 << 18;
    private static final int NNZ = 30;

    /** Sparse rows of a sparse linear model: a 0/1 label for the SVM, the margin plus noise for the regression. */
    private static List<Instance> rows(final long seed, final int n, final boolean binary) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] w = new double[FEATURES];
        for (int j = 0; j < FEATURES; j++) {
            w[j] = rnd.nextDouble() < 0.05 ? rnd.nextGaussian() : 0.0;
        }
        final List<Instance> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            final int[] idx = rnd.ints(4L * NNZ, 0, FEATURES)
                    .distinct()
                    .limit(NNZ)
                    .sorted()
                    .toArray();
            final double[] val = new double[idx.length];
            double margin = 0.2;
            for (int k = 0; k < idx.length; k++) {
                val[k] = 1.0;
                margin += w[idx[k]];
            }
            final double label = binary ? (margin + 0.3 * rnd.nextGaussian() > 0 ? 1 : 0) : margin + rnd.nextGaussian();
            out.add(new Instance(label, 1.0, Vectors.sparse(FEATURES, idx, val)));
        }
        return out;
    }

    @Test
    void againstStock() {
        final SparkSession spark = CrashFits.session(
                        "local-cluster[2,2,2048]", "switchml-linear-estimators-cost", 4, 20_000)
                .config("spark.executor.memory", "1536m")
                .getOrCreate();
        try {
            spark.sparkContext().setLogLevel("WARN");
            final long seed = Seeds.seed("LinearEstimatorsCost", 93);
            final Dataset<Row> binary = MllibParity.frame(spark, rows(seed, 40_000, true), 8);
            final Dataset<Row> real = MllibParity.frame(spark, rows(seed + 1, 40_000, false), 8);
            binary.count();
            real.count();
            measure(
                    "LinearSVC",
                    binary,
                    () -> new LinearSVC().setMaxIter(10).setTol(0).setRegParam(1e-3),
                    () -> {
                        final SwitchMLLinearSVC s = new SwitchMLLinearSVC();
                        s.setMaxIter(10).setTol(0).setRegParam(1e-3);
                        return s;
                    });
            measure(
                    "LinearRegression",
                    real,
                    () -> new LinearRegression()
                            .setSolver("l-bfgs")
                            .setMaxIter(10)
                            .setTol(0)
                            .setRegParam(1e-3),
                    () -> {
                        final SwitchMLLinearRegression s = new SwitchMLLinearRegression();
                        s.setSolver("l-bfgs").setMaxIter(10).setTol(0).setRegParam(1e-3);
                        return s;
                    });
        } finally {
            spark.stop();
        }
    }

    private static void measure(
            final String name,
            final Dataset<Row> data,
            final Supplier<Estimator<?>> stock,
            final Supplier<Estimator<?>> ours) {
        final double[] s = new double[3];
        final double[] o = new double[3];
        for (int rep = -1; rep < 3; rep++) { // rep -1: warm-up pair
            final double ts = seconds(() -> stock.get().fit(data));
            final double to = seconds(() -> ours.get().fit(data));
            System.out.printf(
                    Locale.ROOT,
                    "[linear estimators cost] %s rep %d: stock %.2f s, switchml %.2f s%n",
                    name,
                    rep,
                    ts,
                    to);
            if (rep >= 0) {
                s[rep] = ts;
                o[rep] = to;
            }
        }
        Arrays.sort(s);
        Arrays.sort(o);
        System.out.printf(
                Locale.ROOT,
                "[linear estimators cost] %s, 2^18 features, 40000 rows, 8 partitions, 2 executors "
                        + "x 2 cores, 10 iterations: median stock %.2f s, switchml %.2f s (%.2fx)%n",
                name,
                s[1],
                o[1],
                s[1] / o[1]);
    }

    private static double seconds(final Runnable r) {
        final long t0 = System.nanoTime();
        r.run();
        return (System.nanoTime() - t0) / 1e9;
    }
}

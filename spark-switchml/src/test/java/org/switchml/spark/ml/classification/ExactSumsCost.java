package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;

/**
 * What exact sums cost, side by side with the float path: on a local-cluster of two executors (two cores each),
 * a communication-bound logistic fit (sparse rows over many features, so each evaluation is mostly the allreduce)
 * runs with {@code spark.switchml.exactSums} true and false, interleaved, three times each; the medians of the fit
 * time and of the steady time per evaluation are printed. A measurement, not a check: run it with
 * {@code -Dswitchml.bench=true -Dtest=ExactSumsCost} (docs/benchmarks.md, "Exact sums").
 */
@EnabledIfSystemProperty(named = "switchml.bench", matches = "true")
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ExactSumsCost {
    @Test
    void exactAgainstFloatSums() {
        final int features = Integer.getInteger("switchml.bench.features", 200_000);
        final int partitions = Integer.getInteger("switchml.bench.partitions", 8);
        final SparkSession spark = CrashFits.session("local-cluster[2,2,2048]", "switchml-exact-sums-cost", 4, 20_000)
                .config("spark.executor.memory", "1536m")
                .getOrCreate();
        try {
            spark.sparkContext().setLogLevel("WARN");
            final long seed = Seeds.seed("ExactSumsCost", 91);
            final Dataset<Row> data = MllibParity.frame(
                    spark,
                    LrData.generate(seed, 4000, features, 2, false, 20.0 / features)
                            .rows(),
                    partitions);
            data.count();
            final List<double[]> exact = new ArrayList<>();
            final List<double[]> floats = new ArrayList<>();
            for (int rep = 0; rep < 4; rep++) {
                for (final boolean e : new boolean[] {true, false}) {
                    spark.sparkContext().setLocalProperty("spark.switchml.exactSums", Boolean.toString(e));
                    final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
                    lr.setMaxIter(20).setTol(0).setRegParam(0.01);
                    lr.fit(data);
                    final FitReport r = lr.lastFit();
                    System.out.printf(
                            Locale.ROOT,
                            "[exact sums cost] rep %d exactSums=%s: fit %d ms, %.2f ms per "
                                    + "evaluation, %d evaluations, viaSwitch %s%n",
                            rep,
                            e,
                            r.timing().fitMs(),
                            r.timing().msPerEvaluation(),
                            r.loop().evaluations(),
                            r.viaSwitch());
                    assertTrue(r.viaSwitch(), r.toString());
                    if (rep > 0) { // the first round warms the executors' JIT
                        (e ? exact : floats).add(new double[] {
                            r.timing().fitMs(), r.timing().msPerEvaluation()
                        });
                    }
                }
            }
            final double[] me = medians(exact);
            final double[] mf = medians(floats);
            System.out.printf(
                    Locale.ROOT,
                    "[exact sums cost] %d features, %d partitions, 2 executors: median fit %.0f ms "
                            + "exact vs %.0f ms float (%+.1f%%); median per evaluation %.2f vs %.2f ms (%+.1f%%)%n",
                    features,
                    partitions,
                    me[0],
                    mf[0],
                    100 * (me[0] / mf[0] - 1),
                    me[1],
                    mf[1],
                    100 * (me[1] / mf[1] - 1));
        } finally {
            spark.stop();
        }
    }

    private static double[] medians(final List<double[]> runs) {
        final double[] out = new double[2];
        for (int c = 0; c < 2; c++) {
            final double[] v = new double[runs.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = runs.get(i)[c];
            }
            Arrays.sort(v);
            out[c] = v[v.length / 2];
        }
        return out;
    }
}

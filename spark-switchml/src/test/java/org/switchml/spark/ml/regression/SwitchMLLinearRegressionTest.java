package org.switchml.spark.ml.regression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.evaluation.RegressionEvaluator;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.ml.regression.LinearRegressionModel;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.spark.ml.classification.MllibParity;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;

/**
 * SwitchMLLinearRegression against stock MLlib LinearRegression (solver l-bfgs), its sums through the embedded
 * switch (local[4], no in-memory shortcut): parity on generated data (weighted and not, with and without intercept,
 * standardization on and off, L2, L1 and elastic net) and on LIBSVM's heart_scale read as a regression, then the
 * estimator's own behaviour: the normal solver and the Huber loss train with MLlib's code and say so, a constant
 * label gives MLlib's model without training, every param, save and load, a Pipeline and a CrossValidator.
 *
 * <p>Criteria ({@link #compare}): final objective within 1e-6 relative of MLlib's, or lower; with a problem that
 * converged on both sides (tol, not maxIter), coefficients and intercept within 1e-3 relative in L2 norm.
 */
class SwitchMLLinearRegressionTest {
    /** LIBSVM's own sample (270 rows, 13 features, labels -1/+1), as Debian's liblinear-tools ships it. */
    static final Path HEART_SCALE = Path.of("/usr/share/doc/liblinear-tools/examples/heart_scale");

    private static SparkSession spark;
    private static Dataset<Row> data;

    @BeforeAll
    static void start() {
        spark = MllibParity.localSession("SwitchMLLinearRegressionTest", false);
        data = MllibParity.frame(spark, generate(Seeds.seed("SwitchMLLinearRegressionTest", 51), 1500, 8, 1.0), 5);
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /**
     * Rows of a linear model with noise: features of different means and scales (standardization and the centering
     * matter), a label far from zero, random weights with a few zeros; {@code density} below 1 gives sparse rows.
     */
    static List<Instance> generate(final long seed, final int rows, final int features, final double density) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] mean = new double[features];
        final double[] scale = new double[features];
        final double[] w = new double[features];
        for (int j = 0; j < features; j++) {
            mean[j] = (rnd.nextDouble() - 0.3) * 4;
            scale[j] = Math.pow(10, rnd.nextDouble() * 2 - 1);
            w[j] = rnd.nextGaussian() / scale[j];
        }
        final List<Instance> out = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++) {
            final double[] x = new double[features];
            double y = 12.5;
            for (int j = 0; j < features; j++) {
                if (density >= 1 || rnd.nextDouble() < density) {
                    x[j] = mean[j] + scale[j] * rnd.nextGaussian();
                }
                y += w[j] * x[j];
            }
            y += 0.7 * rnd.nextGaussian();
            final double weight = rnd.nextDouble() < 0.02 ? 0.0 : 0.25 + 2 * rnd.nextDouble();
            out.add(new Instance(
                    y,
                    weight,
                    density >= 1 ? Vectors.dense(x) : Vectors.dense(x).compressed()));
        }
        return out;
    }

    /** Fits stock and ours with the same params on the l-bfgs path; checks the criteria of the class comment. */
    static void compare(final String name, final Dataset<Row> rows, final Consumer<LinearRegression> params) {
        final LinearRegression stock = new LinearRegression().setSolver("l-bfgs");
        final SwitchMLLinearRegression ours = new SwitchMLLinearRegression();
        ours.setSolver("l-bfgs");
        params.accept(stock);
        params.accept(ours);
        final LinearRegressionModel expected = stock.fit(rows);
        final LinearRegressionModel actual = ours.fit(rows);
        final FitReport report = ours.lastFit();
        assertSame(LinearRegressionModel.class, actual.getClass());
        assertSame(ours, actual.parent());
        assertTrue(report.viaSwitch() && report.traffic().packetsIn() > 0, name + ": " + report);
        final double[] he = expected.summary().objectiveHistory();
        final double[] ha = actual.summary().objectiveHistory();
        assertEquals(ha.length - 1, actual.summary().totalIterations());
        final double fe = he[he.length - 1];
        final double fa = ha[ha.length - 1];
        final double objectiveRel = (fa - fe) / Math.abs(fe);
        final double coefRel = relDiff(flatten(expected), flatten(actual));
        final boolean converged =
                !report.reason().equals("MAX_ITERATIONS") && expected.summary().totalIterations() < stock.getMaxIter();
        System.out.printf(
                "[linreg parity] %s: objective %.12g vs MLlib %.12g (rel %+.2e); coefficients rel diff %.2e; "
                        + "iterations %d vs %d (%s); r2 %.6f vs %.6f%n",
                name,
                fa,
                fe,
                objectiveRel,
                coefRel,
                actual.summary().totalIterations(),
                expected.summary().totalIterations(),
                report.reason(),
                actual.summary().r2(),
                expected.summary().r2());
        assertTrue(objectiveRel <= 1e-6, name + ": objective " + fa + " vs MLlib " + fe);
        if (converged) {
            assertTrue(coefRel <= 1e-3, name + ": coefficients differ by " + coefRel);
        }
    }

    /** Coefficients, then the intercept. */
    static double[] flatten(final LinearRegressionModel m) {
        final double[] c = m.coefficients().toArray();
        final double[] out = Arrays.copyOf(c, c.length + 1);
        out[c.length] = m.intercept();
        return out;
    }

    static double relDiff(final double[] expected, final double[] actual) {
        double diff = 0;
        double norm = 0;
        for (int i = 0; i < expected.length; i++) {
            diff += (expected[i] - actual[i]) * (expected[i] - actual[i]);
            norm += expected[i] * expected[i];
        }
        return Math.sqrt(diff) / Math.max(Math.sqrt(norm), 1e-300);
    }

    @Test
    void parityOnGeneratedData() {
        compare("intercept-weighted", data, lr -> lr.setWeightCol("weight"));
        compare("nointercept", data, lr -> lr.setFitIntercept(false));
        compare(
                "l2-nostd-weighted",
                data,
                lr -> lr.setRegParam(0.3).setStandardization(false).setWeightCol("weight"));
        compare("l1", data, lr -> lr.setRegParam(0.2).setElasticNetParam(1.0));
        compare(
                "elasticnet-nostd-nointercept",
                data,
                lr -> lr.setRegParam(0.1)
                        .setElasticNetParam(0.5)
                        .setStandardization(false)
                        .setFitIntercept(false)
                        .setWeightCol("weight"));
        final Dataset<Row> sparse = MllibParity.frame(
                spark, generate(Seeds.seed("SwitchMLLinearRegressionTest.sparse", 52), 1200, 40, 0.15), 4);
        compare(
                "sparse-elasticnet-weighted",
                sparse,
                lr -> lr.setRegParam(0.05).setElasticNetParam(0.3).setWeightCol("weight"));
    }

    @Test
    void parityOnHeartScale() {
        assumeTrue(
                Files.isReadable(HEART_SCALE),
                "NOT RUN: " + HEART_SCALE + " is missing (Debian package liblinear-tools)");
        final Dataset<Row> heart = spark.read()
                .format("libsvm")
                .load(HEART_SCALE.toString())
                .repartition(3)
                .cache();
        assertEquals(270, heart.count());
        compare("heart_scale", heart, lr -> {});
        compare("heart_scale-elasticnet", heart, lr -> lr.setRegParam(0.05).setElasticNetParam(0.5));
    }

    @Test
    void otherPathsTrainWithMllibsCodeAndSaySo() {
        final SwitchMLLinearRegression normal = new SwitchMLLinearRegression();
        normal.setSolver("normal");
        final LinearRegressionModel viaNormal = normal.fit(data);
        assertFalse(normal.lastFit().viaSwitch());
        assertTrue(
                normal.lastFit().reason().contains("solver=normal"),
                normal.lastFit().reason());
        assertArrayEquals(flatten(new LinearRegression().setSolver("normal").fit(data)), flatten(viaNormal), 1e-12);
        // auto with at most 4096 features is the normal equations in MLlib too
        final SwitchMLLinearRegression auto = new SwitchMLLinearRegression();
        auto.fit(data);
        assertTrue(
                auto.lastFit().reason().contains("solver=auto with 8 features"),
                auto.lastFit().reason());
        final SwitchMLLinearRegression huber = new SwitchMLLinearRegression();
        huber.setLoss("huber").setSolver("l-bfgs").setMaxIter(10);
        huber.fit(data);
        assertFalse(huber.lastFit().viaSwitch());
        assertTrue(
                huber.lastFit().reason().contains("loss=huber"), huber.lastFit().reason());
    }

    @Test
    void aConstantLabelGivesMllibsModelWithoutTraining() {
        final List<Instance> rows = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            rows.add(new Instance(3.5, 1.0, Vectors.dense(i, i % 3)));
        }
        final Dataset<Row> constant = MllibParity.frame(spark, rows, 2);
        final LinearRegressionModel expected =
                new LinearRegression().setSolver("l-bfgs").fit(constant);
        final SwitchMLLinearRegression ours = new SwitchMLLinearRegression();
        ours.setSolver("l-bfgs");
        final LinearRegressionModel actual = ours.fit(constant);
        assertEquals(expected.coefficients(), actual.coefficients());
        assertEquals(expected.intercept(), actual.intercept());
        assertArrayEquals(
                expected.summary().objectiveHistory(), actual.summary().objectiveHistory());
        assertTrue(
                ours.lastFit().reason().startsWith("CONSTANT_LABEL"),
                ours.lastFit().reason());
    }

    @Test
    void everyParamOfItsParentAndItsOwn() {
        final SwitchMLLinearRegression lr = new SwitchMLLinearRegression();
        final LinearRegression stock = new LinearRegression();
        assertEquals(stock.params().length + 2, lr.params().length);
        for (final org.apache.spark.ml.param.Param<?> p : stock.params()) {
            assertTrue(lr.hasParam(p.name()), p.name());
            assertEquals(stock.getDefault(p), lr.getDefault(lr.getParam(p.name())), p.name());
        }
        assertEquals("fp64", lr.getPrecision());
        assertThrows(IllegalArgumentException.class, () -> lr.setPrecision("fp16"));
        assertThrows(IllegalArgumentException.class, () -> lr.setSolver("sgd"));
    }

    @Test
    void savesLoadsAndWorksInAPipelineAndACrossValidator(@TempDir final Path dir) throws Exception {
        final SwitchMLLinearRegression lr =
                new SwitchMLLinearRegression().setPrecision("fp32").setCheckpointInterval(5);
        lr.setSolver("l-bfgs").setMaxIter(15).setRegParam(0.1);
        final LinearRegressionModel model = lr.fit(data);
        assertTrue(lr.lastFit().loop().stages() >= 2, "checkpoints every 5 evaluations: " + lr.lastFit());
        model.write().overwrite().save(dir.resolve("model").toString());
        assertArrayEquals(
                flatten(model),
                flatten(LinearRegressionModel.load(dir.resolve("model").toString())));
        lr.write().overwrite().save(dir.resolve("estimator").toString());
        final SwitchMLLinearRegression back =
                SwitchMLLinearRegression.load(dir.resolve("estimator").toString());
        assertEquals("fp32", back.getPrecision());
        assertEquals(5, back.getCheckpointInterval());
        assertEquals("l-bfgs", back.getSolver());
        assertEquals(lr.uid(), back.uid());

        final StandardScaler scaler =
                new StandardScaler().setInputCol("features").setOutputCol("scaled");
        final SwitchMLLinearRegression inPipeline = new SwitchMLLinearRegression();
        inPipeline.setSolver("l-bfgs").setFeaturesCol("scaled").setMaxIter(10);
        final PipelineModel fitted = new Pipeline()
                .setStages(new PipelineStage[] {scaler, inPipeline})
                .fit(data);
        fitted.write().overwrite().save(dir.resolve("pipeline").toString());
        assertEquals(
                LinearRegressionModel.class,
                PipelineModel.load(dir.resolve("pipeline").toString())
                        .stages()[1]
                        .getClass());

        final CrossValidatorModel[] models = new CrossValidatorModel[2];
        int i = 0;
        final SwitchMLLinearRegression ours = new SwitchMLLinearRegression();
        for (final LinearRegression est : new LinearRegression[] {new LinearRegression(), ours}) {
            est.setSolver("l-bfgs").setMaxIter(30);
            final ParamMap[] grid = new ParamGridBuilder()
                    .addGrid(est.regParam(), new double[] {0.0, 0.5})
                    .addGrid(est.elasticNetParam(), new double[] {0.0, 1.0})
                    .build();
            models[i++] = new CrossValidator()
                    .setEstimator(est)
                    .setEstimatorParamMaps(grid)
                    .setEvaluator(new RegressionEvaluator())
                    .setNumFolds(2)
                    .setParallelism(2)
                    .setSeed(4)
                    .fit(data);
        }
        System.out.println("[linreg cv] avgMetrics stock " + Arrays.toString(models[0].avgMetrics()) + ", ours "
                + Arrays.toString(models[1].avgMetrics()));
        // the grid's order follows the params' hashes, which name each estimator: compare the metrics as sets
        final double[] expected = models[0].avgMetrics().clone();
        final double[] actual = models[1].avgMetrics().clone();
        Arrays.sort(expected);
        Arrays.sort(actual);
        assertArrayEquals(expected, actual, 1e-6);
        assertTrue(ours.lastFit() == null || ours.lastFit().viaSwitch());
        assertEquals(LinearRegressionModel.class, models[1].bestModel().getClass());
    }
}

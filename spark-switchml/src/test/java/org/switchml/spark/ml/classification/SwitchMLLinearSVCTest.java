package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LinearSVC;
import org.apache.spark.ml.classification.LinearSVCModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;

/**
 * SwitchMLLinearSVC against stock MLlib LinearSVC, its sums through the embedded switch (local[4], no in-memory
 * shortcut): parity on generated data (weighted and not, with and without intercept, standardization on and off,
 * with and without L2) and on LIBSVM's heart_scale, then the estimator's own behaviour: a genuine model and
 * summary, every param, save and load, a Pipeline, a CrossValidator, and MLlib's error for more than two classes.
 *
 * <p>Criteria ({@link #compare}): final objective within 1e-6 relative of MLlib's, or lower; with a problem that
 * converged on both sides (tol, not maxIter), coefficients and intercept within 1e-3 relative in L2 norm, and
 * predictions that agree on at least 99.5% of the rows (the hinge is flat at the margin, so rows there may tip).
 */
class SwitchMLLinearSVCTest {
    /** LIBSVM's own sample (270 rows, 13 features, labels -1/+1), as Debian's liblinear-tools ships it. */
    static final Path HEART_SCALE = Path.of("/usr/share/doc/liblinear-tools/examples/heart_scale");

    private static SparkSession spark;
    private static Dataset<Row> binary;

    @BeforeAll
    static void start() {
        spark = MllibParity.localSession("SwitchMLLinearSVCTest", false);
        final long seed = Seeds.seed("SwitchMLLinearSVCTest", 41);
        binary = MllibParity.frame(
                spark, LrData.generate(seed, 1500, 8, 2, true, 1.0).rows(), 5);
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /** Fits stock and ours with the same params; checks the criteria of the class comment. */
    static void compare(final String name, final Dataset<Row> data, final Consumer<LinearSVC> params) {
        final LinearSVC stock = new LinearSVC();
        final SwitchMLLinearSVC ours = new SwitchMLLinearSVC();
        params.accept(stock);
        params.accept(ours);
        final LinearSVCModel expected = stock.fit(data);
        final LinearSVCModel actual = ours.fit(data);
        final FitReport report = ours.lastFit();
        assertSame(LinearSVCModel.class, actual.getClass());
        assertSame(ours, actual.parent());
        assertTrue(report.viaSwitch() && report.traffic().packetsIn() > 0, name + ": " + report);
        final double[] he = expected.summary().objectiveHistory();
        final double[] ha = actual.summary().objectiveHistory();
        assertEquals(ha.length - 1, actual.summary().totalIterations());
        final double fe = he[he.length - 1];
        final double fa = ha[ha.length - 1];
        final double objectiveRel = (fa - fe) / Math.abs(fe);
        final double coefRel = OptimizerOracleTest.relDiff(flatten(expected), flatten(actual));
        final boolean converged =
                !report.reason().equals("MAX_ITERATIONS") && expected.summary().totalIterations() < stock.getMaxIter();
        final List<Row> pe = expected.transform(data).select("prediction").collectAsList();
        final List<Row> pa = actual.transform(data).select("prediction").collectAsList();
        int same = 0;
        for (int i = 0; i < pe.size(); i++) {
            same += pe.get(i).getDouble(0) == pa.get(i).getDouble(0) ? 1 : 0;
        }
        final double agreement = (double) same / pe.size();
        System.out.printf(
                "[svc parity] %s: objective %.12g vs MLlib %.12g (rel %+.2e); coefficients rel diff %.2e; "
                        + "iterations %d vs %d (%s); predictions agree %.4f%n",
                name,
                fa,
                fe,
                objectiveRel,
                coefRel,
                actual.summary().totalIterations(),
                expected.summary().totalIterations(),
                report.reason(),
                agreement);
        assertTrue(objectiveRel <= 1e-6, name + ": objective " + fa + " vs MLlib " + fe);
        if (converged) {
            assertTrue(coefRel <= 1e-3, name + ": coefficients differ by " + coefRel);
            assertTrue(agreement >= 0.995, name + ": predictions agree on " + agreement);
        }
    }

    /** Coefficients, then the intercept. */
    static double[] flatten(final LinearSVCModel m) {
        final double[] c = m.coefficients().toArray();
        final double[] out = Arrays.copyOf(c, c.length + 1);
        out[c.length] = m.intercept();
        return out;
    }

    @Test
    void parityOnGeneratedData() {
        compare("intercept-weighted", binary, svc -> svc.setWeightCol("weight"));
        compare("intercept-l2", binary, svc -> svc.setRegParam(0.05));
        compare(
                "nointercept-l2-nostd-weighted",
                binary,
                svc -> svc.setFitIntercept(false)
                        .setRegParam(0.02)
                        .setStandardization(false)
                        .setWeightCol("weight"));
        compare("intercept-l2-nostd", binary, svc -> svc.setRegParam(0.01).setStandardization(false));
        final long seed = Seeds.seed("SwitchMLLinearSVCTest.sparse", 42);
        final Dataset<Row> sparse = MllibParity.frame(
                spark, LrData.generate(seed, 1200, 40, 2, true, 0.15).rows(), 4);
        compare("sparse-l2-weighted", sparse, svc -> svc.setRegParam(0.01).setWeightCol("weight"));
    }

    @Test
    void parityOnHeartScale() {
        assumeTrue(
                Files.isReadable(HEART_SCALE),
                "NOT RUN: " + HEART_SCALE + " is missing (Debian package liblinear-tools)");
        final Dataset<Row> heart = spark.read()
                .format("libsvm")
                .load(HEART_SCALE.toString())
                .withColumn(
                        "label",
                        functions.when(functions.col("label").gt(0), 1.0).otherwise(0.0))
                .repartition(3)
                .cache();
        assertEquals(270, heart.count());
        compare("heart_scale", heart, svc -> svc.setRegParam(0.01));
        compare("heart_scale-nointercept", heart, svc -> svc.setRegParam(0.1).setFitIntercept(false));
    }

    @Test
    void everyParamOfItsParentAndItsOwn() {
        final SwitchMLLinearSVC svc = new SwitchMLLinearSVC();
        assertEquals(new LinearSVC().params().length + 2, svc.params().length);
        final LinearSVC stock = new LinearSVC();
        for (final org.apache.spark.ml.param.Param<?> p : stock.params()) {
            assertTrue(svc.hasParam(p.name()), p.name());
            assertEquals(stock.getDefault(p), svc.getDefault(svc.getParam(p.name())), p.name());
        }
        assertEquals("fp64", svc.getPrecision());
        assertThrows(IllegalArgumentException.class, () -> svc.setPrecision("fp16"));
        assertThrows(IllegalArgumentException.class, () -> svc.setCheckpointInterval(-1));
    }

    @Test
    void aGenuineModelThatSavesLoadsAndWorksInAPipeline(@TempDir final Path dir) throws Exception {
        final SwitchMLLinearSVC svc =
                new SwitchMLLinearSVC().setPrecision("fp32").setCheckpointInterval(4);
        svc.setMaxIter(12).setRegParam(0.1).setThreshold(0.25);
        final LinearSVCModel model = svc.fit(binary);
        assertTrue(model.hasSummary());
        assertEquals(model.summary().totalIterations() + 1, model.summary().objectiveHistory().length);
        assertTrue(svc.lastFit().loop().stages() >= 2, "checkpoints every 4 evaluations: " + svc.lastFit());
        assertEquals(0.25, model.getThreshold());
        model.write().overwrite().save(dir.resolve("model").toString());
        final LinearSVCModel loaded = LinearSVCModel.load(dir.resolve("model").toString());
        assertArrayEquals(flatten(model), flatten(loaded));
        svc.write().overwrite().save(dir.resolve("estimator").toString());
        final SwitchMLLinearSVC back =
                SwitchMLLinearSVC.load(dir.resolve("estimator").toString());
        assertEquals("fp32", back.getPrecision());
        assertEquals(4, back.getCheckpointInterval());
        assertEquals(0.1, back.getRegParam());
        assertEquals(svc.uid(), back.uid());
        // A stock LinearSVC's save loads as the drop-in, with its uid and params.
        final LinearSVC stock = new LinearSVC().setRegParam(0.3).setMaxIter(9);
        stock.write().overwrite().save(dir.resolve("stock-estimator").toString());
        final SwitchMLLinearSVC fromStock =
                SwitchMLLinearSVC.load(dir.resolve("stock-estimator").toString());
        assertEquals(stock.uid(), fromStock.uid());
        assertEquals(0.3, fromStock.getRegParam());
        assertEquals(9, fromStock.getMaxIter());

        final StandardScaler scaler =
                new StandardScaler().setInputCol("features").setOutputCol("scaled");
        final SwitchMLLinearSVC inPipeline = new SwitchMLLinearSVC();
        inPipeline.setFeaturesCol("scaled").setMaxIter(10);
        final PipelineModel fitted = new Pipeline()
                .setStages(new PipelineStage[] {scaler, inPipeline})
                .fit(binary);
        fitted.write().overwrite().save(dir.resolve("pipeline").toString());
        assertEquals(
                LinearSVCModel.class,
                PipelineModel.load(dir.resolve("pipeline").toString())
                        .stages()[1]
                        .getClass());
        assertEquals(
                binary.count(), fitted.transform(binary).select("prediction").count());
    }

    @Test
    void worksInCrossValidator() {
        final List<FitReport> fits = Collections.synchronizedList(new ArrayList<>());
        final SwitchMLLinearSVC ours = new SwitchMLLinearSVC()
                .setListener(new org.switchml.spark.ml.linear.FitListener() {
                    @Override
                    public void onIteration(final org.switchml.spark.ml.linear.IterationReport report) {}

                    @Override
                    public void onFitEnd(final FitReport report) {
                        fits.add(report);
                    }
                });
        ours.setMaxIter(15);
        final LinearSVC stock = new LinearSVC().setMaxIter(15);
        final CrossValidatorModel[] models = new CrossValidatorModel[2];
        int i = 0;
        for (final LinearSVC svc : new LinearSVC[] {stock, ours}) {
            final ParamMap[] grid = new ParamGridBuilder()
                    .addGrid(svc.regParam(), new double[] {0.0, 0.1})
                    .build();
            models[i++] = new CrossValidator()
                    .setEstimator(svc)
                    .setEstimatorParamMaps(grid)
                    .setEvaluator(new BinaryClassificationEvaluator())
                    .setNumFolds(2)
                    .setParallelism(2)
                    .setSeed(3)
                    .fit(binary);
        }
        System.out.println("[svc cv] avgMetrics stock " + Arrays.toString(models[0].avgMetrics()) + ", ours "
                + Arrays.toString(models[1].avgMetrics()));
        assertArrayEquals(models[0].avgMetrics(), models[1].avgMetrics(), 1e-4);
        assertEquals(2 * 2 + 1, fits.size(), "a fit per grid point and fold, and the final one");
        for (final FitReport r : fits) {
            assertTrue(r.viaSwitch() && r.traffic().packetsIn() > 0, r.toString());
        }
        assertEquals(LinearSVCModel.class, models[1].bestModel().getClass());
    }

    @Test
    void moreThanTwoClassesFailAsInMllib() {
        final long seed = Seeds.seed("SwitchMLLinearSVCTest.classes", 43);
        final Dataset<Row> three = MllibParity.frame(
                spark, LrData.generate(seed, 200, 3, 3, false, 1.0).rows(), 2);
        final Throwable expected = assertThrows(Throwable.class, () -> new LinearSVC().fit(three));
        final Throwable actual = assertThrows(Throwable.class, () -> new SwitchMLLinearSVC().fit(three));
        System.out.println("[svc bad input] MLlib: " + root(expected) + "\n[svc bad input] ours:  " + root(actual));
        assertEquals(
                root(expected).lines().findFirst().orElse(""),
                root(actual).lines().findFirst().orElse(""));
    }

    private static String root(final Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + ": " + (c.getMessage() == null ? "" : c.getMessage());
    }
}

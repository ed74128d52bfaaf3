package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.linalg.Matrices;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.stat.Summarizer$;
import org.apache.spark.ml.stat.SummarizerBuffer;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.ml.linear.FeatureSummary;
import org.switchml.spark.ml.linear.FitListener;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.spark.ml.linear.InstanceBatch;
import org.switchml.spark.ml.linear.IterationReport;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.testing.Seeds;
import scala.jdk.javaapi.CollectionConverters;

/** The estimator's own behaviour: checkpoints, fp32, persistence, pipelines, and MLlib's errors on bad input. */
class SwitchMLLogisticRegressionTest {
    private static SparkSession spark;
    private static Dataset<Row> binomial;

    private static final StructType SCHEMA = new StructType(new StructField[] {
        new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("weight", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())
    });

    @BeforeAll
    static void start() {
        // Through the switch: these tests read its counters and the fits' traffic.
        spark = MllibParity.localSession("SwitchMLLogisticRegressionTest", false);
        final long seed = Seeds.seed("SwitchMLLogisticRegressionTest", 31);
        binomial = frame(LrData.generate(seed, 600, 6, 2, true, 1.0).rows());
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    private static Dataset<Row> frame(final List<Instance> rows) {
        final List<Row> out = new ArrayList<>();
        for (final Instance in : rows) {
            out.add(RowFactory.create(in.label(), in.weight(), in.features()));
        }
        return spark.createDataFrame(out, SCHEMA).repartition(3).cache();
    }

    private static Dataset<Row> rows(final double[][] labelWeightX) {
        final List<Row> out = new ArrayList<>();
        for (final double[] r : labelWeightX) {
            out.add(RowFactory.create(r[0], r[1], Vectors.dense(r[2], r[3])));
        }
        return spark.createDataFrame(out, SCHEMA).repartition(2);
    }

    /** Jobs started while {@code body} runs. */
    private static int jobsDuring(final Runnable body) {
        final AtomicInteger jobs = new AtomicInteger();
        final SparkListener listener = new SparkListener() {
            @Override
            public void onJobStart(final SparkListenerJobStart jobStart) {
                jobs.incrementAndGet();
            }
        };
        spark.sparkContext().addSparkListener(listener);
        try {
            body.run();
        } finally {
            try {
                spark.sparkContext().listenerBus().waitUntilEmpty(); // bounded: Spark's default listener timeout
            } catch (final TimeoutException e) {
                throw new AssertionError("listener bus did not drain", e);
            }
            spark.sparkContext().removeSparkListener(listener);
        }
        return jobs.get();
    }

    @Test
    void checkpointsReturnTheSameBits() {
        final LogisticRegressionModel[] models = new LogisticRegressionModel[2];
        final int plain = jobsDuring(() -> models[0] =
                new SwitchMLLogisticRegression().setWeightCol("weight").fit(binomial));
        final int checkpointed = jobsDuring(
                () -> models[1] = ((SwitchMLLogisticRegression) new SwitchMLLogisticRegression().setWeightCol("weight"))
                        .setCheckpointInterval(3)
                        .fit(binomial));
        final int evaluations = models[0].summary().totalIterations() + 1;
        System.out.printf(
                "[checkpoint] %d iterations; jobs: %d without checkpoints, %d with one every 3 evaluations%n",
                models[0].summary().totalIterations(), plain, checkpointed);
        // the state goes to the driver and back between stages: nothing of it may be lost
        assertArrayEquals(MllibParity.flatten(models[0]), MllibParity.flatten(models[1]));
        assertArrayEquals(
                models[0].summary().objectiveHistory(), models[1].summary().objectiveHistory());
        assertTrue(
                checkpointed >= plain + evaluations / 3 - 1,
                "expected a stage per 3 evaluations: " + checkpointed + " jobs vs " + plain);
    }

    /**
     * fp32 sums through the switch (error up to n 2^(E-B-1), about 3e-8 of a block's largest element for
     * 4 workers): the fit follows the same path and lands close to the fp64 one. Measured here: see the
     * printed line; the bound asserted is 1e-4 relative on the coefficients and 1e-7 on the objective.
     */
    @Test
    void fp32StaysCloseToFp64() {
        final LogisticRegressionModel fp64 =
                new SwitchMLLogisticRegression().setRegParam(0.01).fit(binomial);
        final LogisticRegressionModel fp32 = new SwitchMLLogisticRegression()
                .setPrecision("fp32")
                .setRegParam(0.01)
                .fit(binomial);
        final double[] h64 = fp64.summary().objectiveHistory();
        final double[] h32 = fp32.summary().objectiveHistory();
        final double objRel = Math.abs(h32[h32.length - 1] - h64[h64.length - 1]) / h64[h64.length - 1];
        final double coefRel = OptimizerOracleTest.relDiff(MllibParity.flatten(fp64), MllibParity.flatten(fp32));
        System.out.printf(
                "[fp32] iterations %d vs %d (fp64); objective rel diff %.2e; coefficients rel diff %.2e%n",
                h32.length - 1, h64.length - 1, objRel, coefRel);
        assertTrue(objRel < 1e-7, "objective rel diff " + objRel);
        assertTrue(coefRel < 1e-4, "coefficients rel diff " + coefRel);
    }

    /** The lines that {@code loggers} log while {@code body} runs, at INFO and above. */
    private static List<String> logged(final Runnable body, final String... loggers) {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final AbstractAppender capture = new AbstractAppender("drop-in-lines", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(final LogEvent event) {
                if (Arrays.asList(loggers).contains(event.getLoggerName())) {
                    lines.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
                }
            }
        };
        capture.start();
        final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        for (final String logger : loggers) {
            Configurator.setLevel(logger, Level.INFO);
        }
        ctx.getConfiguration().getRootLogger().addAppender(capture, Level.INFO, null);
        ctx.updateLoggers();
        try {
            body.run();
        } finally {
            ctx.getConfiguration().getRootLogger().removeAppender(capture.getName());
            ctx.updateLoggers();
            capture.stop();
        }
        return lines;
    }

    private static long count(final List<String> lines, final String text) {
        return lines.stream().filter(l -> l.contains(text)).count();
    }

    /**
     * What the drop-in does differently it says: params that shape only MLlib's treeAggregate are warned about once
     * per estimator (CrossValidator's copies keep the uid), getPrecision answers what a fit would use, and a fit
     * logs MLlib's own instrumentation lines.
     */
    @Test
    void theDropInSaysWhatItDoesDifferently() {
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
        lr.setMaxIter(3).setAggregationDepth(4).setMaxBlockSizeInMB(2.0);
        final String ours = SwitchMLLogisticRegression.class.getName();
        final String mllib = "org.apache.spark.ml.util.Instrumentation";
        final List<String> lines = logged(
                () -> {
                    lr.fit(binomial);
                    lr.copy(ParamMap.empty()).fit(binomial);
                },
                ours,
                mllib);
        assertEquals(1, count(lines, "aggregationDepth=4 is ignored"), String.join("\n", lines));
        assertEquals(1, count(lines, "maxBlockSizeInMB=2.0 is ignored"), String.join("\n", lines));
        assertTrue(lines.stream().filter(l -> l.contains("is ignored")).allMatch(l -> l.startsWith("WARN ")), "level");
        // MLlib's lines, once per fit, as the stock estimator logs them
        assertEquals(2, count(lines, "Stage class: SwitchMLLogisticRegression"), String.join("\n", lines));
        assertEquals(2, count(lines, "{\"numFeatures\":6}"), String.join("\n", lines));
        assertEquals(2, count(lines, "{\"numExamples\":600}"), String.join("\n", lines));
        assertEquals(2, count(lines, "\"aggregationDepth\":4"), "the params set: " + String.join("\n", lines));
        assertEquals(2, count(lines, "training finished"), String.join("\n", lines));
        // Unset params warn about nothing.
        final List<String> quiet =
                logged(() -> new SwitchMLLogisticRegression().setMaxIter(2).fit(binomial), ours);
        assertEquals(0, count(quiet, "is ignored"), String.join("\n", quiet));

        assertEquals("fp64", new SwitchMLLogisticRegression().getPrecision());
        spark.sparkContext().setLocalProperty("spark.switchml.precision", "fp32");
        try {
            assertEquals("fp32", new SwitchMLLogisticRegression().getPrecision(), "unset: the setting's");
            assertEquals(
                    "fp64",
                    new SwitchMLLogisticRegression().setPrecision("FP64").getPrecision(),
                    "set: its own");
        } finally {
            spark.sparkContext().setLocalProperty("spark.switchml.precision", null);
        }
    }

    /** The estimator's precision param, when the user leaves it unset, follows spark.switchml.precision. */
    @Test
    void anUnsetPrecisionFollowsTheSparkSetting() {
        final double[] fp64 = new SwitchMLLogisticRegression()
                .setMaxIter(5)
                .fit(binomial)
                .summary()
                .objectiveHistory();
        final double[] fp32 = new SwitchMLLogisticRegression()
                .setPrecision("fp32")
                .setMaxIter(5)
                .fit(binomial)
                .summary()
                .objectiveHistory();
        assertFalse(
                Arrays.equals(fp64, fp32), "fp32 and fp64 sums gave the same bits: the test cannot tell them apart");
        spark.sparkContext().setLocalProperty("spark.switchml.precision", "fp32");
        try {
            assertArrayEquals(
                    fp32,
                    new SwitchMLLogisticRegression()
                            .setMaxIter(5)
                            .fit(binomial)
                            .summary()
                            .objectiveHistory(),
                    0.0,
                    "unset: the setting's fp32");
            assertArrayEquals(
                    fp64,
                    new SwitchMLLogisticRegression()
                            .setPrecision("fp64")
                            .setMaxIter(5)
                            .fit(binomial)
                            .summary()
                            .objectiveHistory(),
                    0.0,
                    "set on the estimator: its own fp64");
        } finally {
            spark.sparkContext().setLocalProperty("spark.switchml.precision", null);
        }
    }

    @Test
    void modelAndEstimatorSaveAndLoad(@TempDir final Path dir) throws Exception {
        final SwitchMLLogisticRegression lr =
                new SwitchMLLogisticRegression().setPrecision("fp32").setCheckpointInterval(7);
        lr.setMaxIter(5).setRegParam(0.1);
        final LogisticRegressionModel model = lr.fit(binomial);
        model.write().overwrite().save(dir.resolve("model").toString());
        final LogisticRegressionModel loaded =
                LogisticRegressionModel.load(dir.resolve("model").toString());
        assertArrayEquals(MllibParity.flatten(model), MllibParity.flatten(loaded));
        assertEquals(5, loaded.getMaxIter());

        lr.write().overwrite().save(dir.resolve("estimator").toString());
        final LogisticRegression back =
                LogisticRegression.load(dir.resolve("estimator").toString());
        assertEquals(SwitchMLLogisticRegression.class, back.getClass());
        final SwitchMLLogisticRegression typed = (SwitchMLLogisticRegression) back;
        assertEquals("fp32", typed.getPrecision());
        assertEquals(7, typed.getCheckpointInterval());
        assertEquals(0.1, typed.getRegParam());
        assertEquals(lr.uid(), typed.uid());
        assertEquals(
                SwitchMLLogisticRegression.class,
                SwitchMLLogisticRegression.load(dir.resolve("estimator").toString())
                        .getClass());
        // A stock LogisticRegression's save loads as the drop-in, with its uid and params.
        final LogisticRegression stock =
                new LogisticRegression().setRegParam(0.3).setMaxIter(9);
        stock.write().overwrite().save(dir.resolve("stock-estimator").toString());
        final SwitchMLLogisticRegression fromStock =
                SwitchMLLogisticRegression.load(dir.resolve("stock-estimator").toString());
        assertEquals(stock.uid(), fromStock.uid());
        assertEquals(0.3, fromStock.getRegParam());
        assertEquals(9, fromStock.getMaxIter());
    }

    @Test
    void worksInAPipeline(@TempDir final Path dir) throws Exception {
        final StandardScaler scaler =
                new StandardScaler().setInputCol("features").setOutputCol("scaled");
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
        lr.setFeaturesCol("scaled").setMaxIter(10);
        final Pipeline pipeline = new Pipeline().setStages(new PipelineStage[] {scaler, lr});
        final PipelineModel fitted = pipeline.fit(binomial);
        assertEquals(
                binomial.count(),
                fitted.transform(binomial).select("prediction").count());
        fitted.write().overwrite().save(dir.resolve("pipeline").toString());
        final PipelineModel loaded = PipelineModel.load(dir.resolve("pipeline").toString());
        assertEquals(LogisticRegressionModel.class, loaded.stages()[1].getClass());
        pipeline.write().overwrite().save(dir.resolve("unfitted").toString());
        assertEquals(
                SwitchMLLogisticRegression.class,
                Pipeline.load(dir.resolve("unfitted").toString()).getStages()[1].getClass());
    }

    /** Fits stock MLlib and ours; both must fail with the same exception class and message. */
    private static void sameFailure(final Dataset<Row> data, final Consumer<LogisticRegression> params) {
        final LogisticRegression stock = new LogisticRegression();
        final SwitchMLLogisticRegression ours = new SwitchMLLogisticRegression();
        params.accept(stock);
        params.accept(ours);
        final Throwable expected = assertThrows(Throwable.class, () -> stock.fit(data));
        final Throwable actual = assertThrows(Throwable.class, () -> ours.fit(data));
        System.out.println(
                "[bad input] MLlib: " + rootMessage(expected) + "\n[bad input] ours:  " + rootMessage(actual));
        // MLlib names the estimator by getClass().getSimpleName(), so for the subclass it would name ours too
        assertEquals(
                rootMessage(expected), rootMessage(actual).replace("SwitchMLLogisticRegression", "LogisticRegression"));
    }

    private static String rootMessage(final Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        final String m = c.getMessage() == null ? "" : c.getMessage();
        // Spark's raise_error prefixes the query context; compare the first line
        return c.getClass().getSimpleName() + ": " + m.split("\n")[0];
    }

    @Test
    void badInputFailsAsInMllib() {
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {1, -1, 3, 4}}), lr -> lr.setWeightCol("weight"));
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {0.5, 1, 3, 4}}), lr -> {});
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {2, 1, 3, 4}, {1, 1, 0, 1}}), lr -> lr.setFamily("binomial"));
        sameFailure(rows(new double[][] {{0, 1, Double.NaN, 2}, {1, 1, 3, 4}}), lr -> {});
        sameFailure(
                rows(new double[][] {{0, 1, 1, 2}, {1, 1, 3, 4}}),
                lr -> lr.setThresholds(new double[] {0.2, 0.3, 0.5}));
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {1, 1, 3, 4}}).limit(0), lr -> {});
        sameFailure(rows(new double[][] {{0, 0, 1, 2}, {1, 0, 3, 4}}), lr -> lr.setWeightCol("weight"));
        // labels not in 0..K-1: negative, and a binomial family beside three classes (above), or over
        // what the label column's metadata says
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {-1, 1, 3, 4}}), lr -> {});
        sameFailure(rows(new double[][] {{0, 1, 1, 2}, {1, 1, Double.POSITIVE_INFINITY, 4}}), lr -> {});
        sameFailure(
                rows(new double[][] {{0, 1, 1, 2}, {1, 1, 3, 4}}),
                lr -> lr.setWeightCol("weight").setLowerBoundsOnCoefficients(Matrices.dense(1, 3, new double[3])));
    }

    /**
     * Labels 0 and 3 only (classes 1 and 2 never occur): MLlib takes K = 4 and fits a multinomial model
     * with four rows; so does ours, with the same predictions.
     */
    @Test
    void labelsWithGapsGiveMllibsClassCount() {
        final Dataset<Row> gaps = rows(
                new double[][] {{0, 1, 1, 2}, {3, 1, 3, 4}, {0, 1, 0, 1}, {3, 1, 4, 1}, {0, 1, 1, 0}, {3, 1, 5, 3}});
        final LogisticRegressionModel expected =
                new LogisticRegression().setMaxIter(10).fit(gaps);
        final LogisticRegressionModel actual =
                new SwitchMLLogisticRegression().setMaxIter(10).fit(gaps);
        assertEquals(4, expected.numClasses());
        assertEquals(expected.numClasses(), actual.numClasses());
        assertEquals(
                expected.coefficientMatrix().numRows(),
                actual.coefficientMatrix().numRows());
        assertEquals(
                expected.transform(gaps).select("prediction").collectAsList(),
                actual.transform(gaps).select("prediction").collectAsList());
    }

    /**
     * Through the real switch: a feature around 1e6 and one around 1e-3 share a quantization block; in
     * one round of raw sums the small feature's sum of squares would sit 1e17 below the block's largest
     * element and vanish (and the weight sum beside it would lose its low bits). The two rounds keep every
     * std and mean to 1e-10 (measured: 3e-13), MLlib's Summarizer being the reference.
     */
    @Test
    void statisticsSurviveMixedScalesThroughTheSwitch() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("mixedScales", 32));
        final List<InstanceBatch> batches = new ArrayList<>();
        final List<Instance> rows = new ArrayList<>();
        InstanceBatch.Builder b = new InstanceBatch.Builder(2, 100);
        for (int i = 0; i < 1000; i++) {
            final double[] x = {1e6 + 1e6 * rnd.nextGaussian(), 3e-3 + 1e-3 * rnd.nextGaussian()};
            final double w = 0.5 + rnd.nextDouble();
            rows.add(new Instance(i % 2, w, Vectors.dense(x)));
            b.addDense(i % 2, w, x);
            if (b.full()) {
                batches.add(b.build());
            }
        }
        final FeatureSummary summary = new FeatureSummary(2, 4);
        final org.switchml.spark.ReplicatedLoop.Result r = org.switchml.spark.ReplicatedLoop.run(
                new JavaSparkContext(spark.sparkContext()).parallelize(batches, 4),
                summary.initialState(),
                summary.vectorLength(),
                summary,
                new org.switchml.spark.ReplicatedLoop.Options(FeatureSummary.rounds(), 0, 0));
        assertTrue(r.viaSwitch());
        final FeatureSummary.Stats ours = summary.stats(r.state());
        final SummarizerBuffer mllib = Summarizer$.MODULE$
                .getClassificationSummarizers(
                        new JavaSparkContext(spark.sparkContext())
                                .parallelize(rows, 4)
                                .rdd(),
                        2,
                        CollectionConverters.asScala(List.of("mean", "std", "count"))
                                .toSeq())
                ._1();
        for (int j = 0; j < 2; j++) {
            final double std = mllib.std().apply(j);
            final double mean = mllib.mean().apply(j);
            System.out.printf(
                    "[mixed scales] feature %d: std %.12g vs MLlib %.12g (rel %.1e); mean rel %.1e%n",
                    j, ours.std()[j], std, Math.abs(ours.std()[j] - std) / std, Math.abs(ours.mean()[j] - mean) / mean);
            assertEquals(std, ours.std()[j], 1e-10 * std);
            assertEquals(mean, ours.mean()[j], 1e-10 * Math.abs(mean));
        }
    }

    /**
     * Progress while a fit runs: the listener hears each entry of the objective history once and in
     * order (across checkpoint stages too), with the same values the model reports; the Spark jobs are
     * named after the caller's own description, which is restored afterwards; the fit's switch counters
     * are reachable afterwards.
     */
    @Test
    void progressReachesTheListenerTheJobDescriptionsAndTheFitReport() {
        final List<IterationReport> heard = Collections.synchronizedList(new ArrayList<>());
        final List<FitReport> ends = Collections.synchronizedList(new ArrayList<>());
        final List<String> descriptions = Collections.synchronizedList(new ArrayList<>());
        final SparkListener jobs = new SparkListener() {
            @Override
            public void onJobStart(final SparkListenerJobStart jobStart) {
                descriptions.add(String.valueOf(jobStart.properties().getProperty("spark.job.description")));
            }
        };
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression()
                .setCheckpointInterval(4)
                .setListener(new FitListener() {
                    @Override
                    public void onIteration(final IterationReport report) {
                        heard.add(report);
                    }

                    @Override
                    public void onFitEnd(final FitReport report) {
                        ends.add(report);
                    }
                });
        lr.setWeightCol("weight");
        spark.sparkContext().addSparkListener(jobs);
        spark.sparkContext().setJobDescription("the caller's job");
        final LogisticRegressionModel model;
        try {
            model = lr.fit(binomial);
            assertEquals("the caller's job", spark.sparkContext().getLocalProperty("spark.job.description"));
        } finally {
            spark.sparkContext().setJobDescription(null);
            try {
                spark.sparkContext().listenerBus().waitUntilEmpty();
            } catch (final TimeoutException e) {
                throw new AssertionError("listener bus did not drain", e);
            }
            spark.sparkContext().removeSparkListener(jobs);
        }
        final FitReport report = lr.lastFit();
        heard.forEach(r -> System.out.println("[progress] " + r.line()));
        System.out.println("[progress] " + report);
        descriptions.forEach(d -> System.out.println("[progress] job: " + d));

        final double[] history = model.summary().objectiveHistory();
        assertEquals(history.length, heard.size(), "one report per objective history entry");
        int evaluations = 0;
        long retransmissions = 0;
        double millis = 0;
        for (int i = 0; i < history.length; i++) {
            final IterationReport r = heard.get(i);
            assertEquals(history[i], r.loss(), "loss of entry " + i);
            assertTrue(i == 0 || r.iteration() >= heard.get(i - 1).iteration(), "iterations in order");
            assertNotEquals(-1, r.retransmissions(), "an embedded switch's counters are known: " + r.line());
            assertTrue(r.megabytes() > 0 && r.evaluations() >= 1, r.line());
            // Both are parts of the iteration's wall time, measured on the same clock.
            assertTrue(
                    r.computeMillis() >= 0
                            && r.updateMillis() >= 0
                            && r.computeMillis() + r.updateMillis() <= r.millis() + 1e-6,
                    r.line());
            assertFalse(r.nonFinite());
            evaluations += r.evaluations();
            retransmissions += r.retransmissions();
            millis += r.millis();
        }
        assertEquals(
                model.summary().totalIterations(), heard.get(heard.size() - 1).iteration());
        assertEquals(report.loop().evaluations(), evaluations);
        assertEquals(List.of(report), ends);
        // The reports' times are disjoint spans of task 0's clock inside the loop the fit timed.
        assertTrue(
                millis > 0 && millis <= report.timing().fitMs() + 1,
                millis + " ms reported, loop " + report.timing().fitMs() + " ms");

        assertTrue(report.viaSwitch());
        final FitReport.SwitchTraffic traffic = report.traffic();
        assertEquals(0, traffic.fallbacks());
        assertTrue(traffic.packetsIn() > 0 && traffic.packetsOut() > 0, report.toString());
        // Per slot use the switch sends as many results as it took contributions, and it answers a
        // retransmission with one result or drops it (its slot still pending, or moved past): so what
        // came in and did not go out is the drops, and nothing else is dropped on loopback.
        assertEquals(traffic.packetsIn() - traffic.packetsOut(), traffic.drops(), report.toString());
        assertTrue(
                retransmissions <= traffic.retransmissions(),
                "the reports' " + retransmissions + " retransmissions are among the fit's "
                        + traffic.retransmissions());
        // Each evaluation's allreduce sent at least one first copy, which is no retransmission.
        assertTrue(
                traffic.retransmissions() <= traffic.packetsIn() - report.loop().evaluations(), report.toString());
        assertTrue(traffic.megabytes() > 0);
        assertTrue(report.loop().stages() > 1, "a stage per 4 evaluations");

        final String prefix = "the caller's job / SwitchMLLogisticRegression " + lr.uid() + ": ";
        assertTrue(descriptions.contains(prefix + "reading the input into the cache"), descriptions.toString());
        assertTrue(
                descriptions.contains(prefix + "feature statistics (one barrier stage, 2 allreduces)"),
                descriptions.toString());
        final long fitStages = descriptions.stream()
                .filter(d -> d.startsWith(prefix + "iterations "))
                .count();
        assertEquals(report.loop().stages(), fitStages, descriptions.toString());
        assertTrue(
                descriptions.contains(prefix + "iterations 0 to <=4 of 100 (evaluations 1-4, then a checkpoint)"),
                descriptions.toString());
    }

    /**
     * Coefficients so large that every margin overflows: each partition's loss is infinite. It crosses
     * the switch as a flag, never as an infinity to be summed, and the fit reports it (the objective is
     * +infinity and the line search shortens its step, as MLlib's does on an infinite loss).
     */
    @Test
    void aNonFiniteLossIsFlaggedNotSummed() {
        final double[] huge = new double[6];
        Arrays.fill(huge, Double.MAX_VALUE / 4); // margins of |x| > 1/6 per feature overflow
        final LogisticRegressionModel start =
                new LogisticRegressionModel("start", Matrices.dense(1, 6, huge), Vectors.dense(0.0), 2, false);
        final List<IterationReport> heard = Collections.synchronizedList(new ArrayList<>());
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression().setListener(heard::add);
        lr.setMaxIter(3).setInitialModel(start);
        lr.fit(binomial);
        final FitReport report = lr.lastFit();
        System.out.println("[non-finite] " + report);
        heard.forEach(r -> System.out.println("[non-finite] " + r.line()));
        assertTrue(report.viaSwitch());
        assertTrue(report.loop().nonFiniteEvaluations() >= 1, report.toString());
        assertTrue(heard.get(0).nonFinite());
        assertEquals(Double.POSITIVE_INFINITY, heard.get(0).loss());
    }

    @Test
    void paramsAreValidatedAsInMllib() {
        assertThrows(IllegalArgumentException.class, () -> new SwitchMLLogisticRegression().setFamily("poisson"));
        assertThrows(IllegalArgumentException.class, () -> new SwitchMLLogisticRegression().setPrecision("fp16"));
        assertThrows(IllegalArgumentException.class, () -> new SwitchMLLogisticRegression().setCheckpointInterval(-1));
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
        assertEquals(new LogisticRegression().params().length + 2, lr.params().length);
        assertEquals("fp64", lr.getPrecision());
        assertEquals(0, lr.getCheckpointInterval());
        assertEquals(100, lr.getMaxIter());
        assertEquals(1e-6, lr.getTol());
    }

    @Test
    void constantLabelGivesMllibsSpecialModel() {
        final Dataset<Row> constant = rows(new double[][] {{1, 1, 1, 2}, {1, 1, 3, 4}, {1, 1, 0, 1}});
        final LogisticRegressionModel expected = new LogisticRegression().fit(constant);
        final LogisticRegressionModel actual = new SwitchMLLogisticRegression().fit(constant);
        assertEquals(expected.coefficientMatrix(), actual.coefficientMatrix());
        assertEquals(expected.interceptVector(), actual.interceptVector());
        assertEquals(expected.summary().totalIterations(), actual.summary().totalIterations());
        assertEquals(Double.POSITIVE_INFINITY, actual.intercept());

        // all zeros, and multinomial: MLlib's other special cases
        final Dataset<Row> zeros = rows(new double[][] {{0, 1, 1, 2}, {0, 1, 3, 4}});
        for (final String family : new String[] {"binomial", "multinomial"}) {
            final LogisticRegressionModel e =
                    new LogisticRegression().setFamily(family).fit(family.equals("binomial") ? zeros : constant);
            final LogisticRegressionModel a = new SwitchMLLogisticRegression()
                    .setFamily(family)
                    .fit(family.equals("binomial") ? zeros : constant);
            assertEquals(e.coefficientMatrix(), a.coefficientMatrix(), family);
            assertEquals(e.interceptVector(), a.interceptVector(), family);
            assertEquals(e.numClasses(), a.numClasses(), family);
            assertArrayEquals(e.summary().objectiveHistory(), a.summary().objectiveHistory(), family);
        }
    }

    /**
     * CrossValidator with parallelism 3: its fits run at once on copies of the estimator, their barrier
     * stages share the one embedded switch (each its own switch job), and every fit goes through it. The
     * result is stock MLlib's: the same average metrics and the same best params.
     */
    @Test
    void worksInCrossValidatorWithParallelism() {
        final List<FitReport> fits = Collections.synchronizedList(new ArrayList<>());
        final SwitchMLLogisticRegression ours = new SwitchMLLogisticRegression().setListener(new FitListener() {
            @Override
            public void onIteration(final IterationReport report) {}

            @Override
            public void onFitEnd(final FitReport report) {
                fits.add(report);
            }
        });
        ours.setMaxIter(20);
        final LogisticRegression stock = new LogisticRegression().setMaxIter(20);
        final CrossValidatorModel[] models = new CrossValidatorModel[2];
        int i = 0;
        for (final LogisticRegression lr : new LogisticRegression[] {stock, ours}) {
            final ParamMap[] grid = new ParamGridBuilder()
                    .addGrid(lr.regParam(), new double[] {0.0, 0.01, 0.1})
                    .build();
            models[i++] = new CrossValidator()
                    .setEstimator(lr)
                    .setEstimatorParamMaps(grid)
                    .setEvaluator(new BinaryClassificationEvaluator())
                    .setNumFolds(2)
                    .setParallelism(3)
                    .setSeed(5)
                    .fit(binomial);
        }
        System.out.println("[cv] avgMetrics stock " + Arrays.toString(models[0].avgMetrics()) + ", ours "
                + Arrays.toString(models[1].avgMetrics()));
        assertArrayEquals(models[0].avgMetrics(), models[1].avgMetrics(), 1e-6);
        assertEquals(3 * 2 + 1, fits.size(), "a fit per grid point and fold, and the final one");
        for (final FitReport r : fits) {
            assertTrue(r.viaSwitch() && r.traffic().packetsIn() > 0, r.toString());
        }
        assertEquals(LogisticRegressionModel.class, models[1].bestModel().getClass());
    }

    /**
     * An input of 300 partitions (more than the 4 task slots, hundreds as usual): no shuffle, the same
     * fit as from 3 partitions up to the order of the sums.
     */
    @Test
    void hundredsOfPartitions() {
        final Dataset<Row> many = binomial.repartition(300).cache();
        try {
            assertEquals(300, many.rdd().getNumPartitions());
            final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
            lr.setWeightCol("weight").setRegParam(0.01);
            final LogisticRegressionModel few = lr.fit(binomial);
            final LogisticRegressionModel lots = lr.fit(many);
            final LogisticRegressionModel stock = new LogisticRegression()
                    .setWeightCol("weight")
                    .setRegParam(0.01)
                    .fit(many);
            final double[] hf = few.summary().objectiveHistory();
            final double[] hl = lots.summary().objectiveHistory();
            final double[] hs = stock.summary().objectiveHistory();
            System.out.printf(
                    "[partitions] 3: %d iterations, loss %.15g; 300: %d iterations, loss %.15g; stock on 300:"
                            + " %.15g; %s%n",
                    hf.length - 1,
                    hf[hf.length - 1],
                    hl.length - 1,
                    hl[hl.length - 1],
                    hs[hs.length - 1],
                    lr.lastFit());
            assertTrue(lr.lastFit().viaSwitch());
            assertEquals(hf[hf.length - 1], hl[hl.length - 1], 1e-9 * hf[hf.length - 1]);
            assertTrue(hl[hl.length - 1] <= hs[hs.length - 1] * (1 + 1e-6));
            assertTrue(OptimizerOracleTest.relDiff(MllibParity.flatten(stock), MllibParity.flatten(lots)) < 1e-3);
        } finally {
            many.unpersist();
        }
    }

    /**
     * With the local shortcut on (per call), the one executor of the local master takes the fit's sums in
     * memory: nothing reaches the switch, and the report says so.
     */
    @Test
    void withTheLocalShortcutTheReportSaysTheSumsWereTakenInMemory() {
        spark.sparkContext().setLocalProperty("spark.switchml.localShortcut", "true");
        try {
            final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
            lr.setMaxIter(5).fit(binomial);
            final FitReport r = lr.lastFit();
            assertTrue(r.viaSwitch() && r.traffic().fallbacks() == 0, r.toString());
            assertTrue(r.traffic().inMemoryStages() >= 2, "the statistics and the loop: " + r);
            assertEquals(0, r.traffic().packetsIn(), r.toString());
            assertEquals(0.0, r.traffic().megabytes(), r.toString());
        } finally {
            spark.sparkContext().setLocalProperty("spark.switchml.localShortcut", null);
        }
    }

    /**
     * This session configures no SwitchMLPlugin (local master, no spark.plugins): the fit starts the
     * embedded switch in the driver by itself, and its sums went through it.
     */
    @Test
    void withoutThePluginTheFitStartsTheEmbeddedSwitch() {
        assertFalse(spark.sparkContext().conf().contains("spark.plugins"));
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression();
        lr.setMaxIter(5).fit(binomial);
        assertTrue(DriverRuntimes.forContext(spark.sparkContext()).registrar() instanceof EmbeddedSwitchRegistrar);
        final FitReport r = lr.lastFit();
        assertTrue(
                r.viaSwitch()
                        && r.traffic().fallbacks() == 0
                        && r.traffic().packetsIn() > 0
                        && r.traffic().packetsOut() > 0,
                r.toString());
    }
}

package org.switchml.spark.ml.linear;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.util.Instrumentation;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.spark.config.SwitchMLConfig;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One fit of a linear estimator through the switch, step by step as every estimator runs it: the input read into
 * cached {@link InstanceBatch}es ({@link #train}), the statistics ({@link #statistics}, {@link
 * #regressionStatistics}), the standardization the objective's copies take ({@link #standardization}), the
 * optimizer's loop ({@link #run}) and the report ({@link #trained}, {@link #withoutTraining}). Where the switch
 * cannot be used, or the params take another path in MLlib, stock MLlib trains instead ({@link #stock}), with one
 * warning per application and reason. The estimator builds its problem, objective, optimizer and model in between;
 * the Spark jobs of the fit are named after it ({@code "SwitchMLLinearSVC uid: what"}).
 *
 * <p>A fit through the switch logs MLlib's own instrumentation lines (logger
 * {@code org.apache.spark.ml.util.Instrumentation}: the stage, the dataset, the params set, the features, examples
 * and sum of weights, and the end), as the stock estimator does, and warns once per estimator about the params
 * that only shape MLlib's own summation ({@link #IGNORED}).
 */
public final class LinearFit {
    /** Params of MLlib's linear estimators that shape only its treeAggregate, which the switch replaces. */
    static final List<String> IGNORED = List.of("aggregationDepth", "maxBlockSizeInMB");

    /** Estimator uid and param already warned about, so that CrossValidator's copies warn once. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private final Estimator estimator;
    private final Instrumentation instr;
    private final SparkContext sc;
    private final JobNames names;
    private final JavaRDD<InstanceBatch> batches;
    private final SwitchUse use;
    private final Stopwatch clock = new Stopwatch();
    private final int numFeatures;
    private final long readMs;
    private FeatureSummary.Stats stats;
    private String statisticsKey;
    private Broadcast<MeanStd> broadcast;
    private FitLoop.Fitted fitted;
    private long statisticsMs;
    private long fitMs;

    /**
     * The estimator a fit is of.
     *
     * @param stage     the estimator itself (its uid, its params)
     * @param name      its class's simple name, e.g. {@code SwitchMLLinearSVC}
     * @param stockName its MLlib parent's, e.g. {@code LinearSVC}
     * @param log       its logger, which the fit's lines go to
     * @param reports   its reports and listener
     */
    public record Estimator(PipelineStage stage, String name, String stockName, Logger log, FitReports reports) {
        /** The estimator's uid. */
        public String uid() {
            return stage.uid();
        }
    }

    /**
     * The columns a fit reads.
     *
     * @param label       the label, checked as MLlib checks it (e.g. {@code DatasetUtils.checkClassificationLabels})
     * @param weightCol   the weight column, if any
     * @param featuresCol the features column
     */
    public record Columns(Column label, Option<String> weightCol, String featuresCol) {}

    /** What an estimator does between reading its input and its model. */
    @FunctionalInterface
    public interface Body<M> {
        M fit(LinearFit fit);
    }

    private LinearFit(
            final Estimator estimator,
            final Instrumentation instr,
            final SparkContext sc,
            final JobNames names,
            final JavaRDD<InstanceBatch> batches) {
        this.estimator = estimator;
        this.instr = instr;
        this.sc = sc;
        this.names = names;
        this.batches = batches;
        this.use = new SwitchUse(SwitchMLDriver.of(sc));
        this.numFeatures = InputBatches.numFeatures(batches);
        this.readMs = clock.lapMs();
        instr.logNumFeatures(numFeatures);
    }

    /**
     * Trains {@code estimator} on {@code dataset}: with {@code body} through the switch on the input read into cached
     * batches (released at the end), or with {@code stock} (MLlib's own training, reporting {@code stockIterations})
     * where the switch cannot be used.
     */
    public static <M> M train(
            final Estimator estimator,
            final Dataset<?> dataset,
            final Columns columns,
            final Supplier<M> stock,
            final ToIntFunction<M> stockIterations,
            final Body<M> body) {
        final SparkContext sc = dataset.sparkSession().sparkContext();
        final Optional<StockFallback.Reason> reason = StockFallback.reason(sc);
        if (reason.isPresent()) {
            return StockFallback.train(
                    sc,
                    estimator.log(),
                    estimator.uid(),
                    estimator.stockName(),
                    reason.get(),
                    stock,
                    stockIterations,
                    r -> estimator.reports().finish(estimator.uid(), estimator.log(), r));
        }
        return Instrumentation.instrumented(instr -> {
            final PipelineStage stage = estimator.stage();
            instr.logPipelineStage(stage);
            instr.logDataset(dataset);
            instr.logParams(
                    stage,
                    CollectionConverters.asScala(Arrays.<Param<?>>asList(stage.params()))
                            .toSeq());
            warnIgnored(estimator);
            try (JobNames names = new JobNames(sc, estimator.name() + " " + estimator.uid())) {
                names.describe("reading the input into the cache");
                final JavaRDD<InstanceBatch> batches = InputBatches.cached(
                        InputBatches.instances(dataset, columns.label(), columns.weightCol(), columns.featuresCol()));
                LinearFit fit = null;
                try {
                    fit = new LinearFit(estimator, instr, sc, names, batches);
                    return body.fit(fit);
                } finally {
                    if (fit != null) {
                        fit.destroyBroadcast();
                    }
                    batches.unpersist(false);
                }
            }
        });
    }

    /** One warning per estimator and param set that the switch's fit does not use. */
    private static void warnIgnored(final Estimator estimator) {
        final PipelineStage stage = estimator.stage();
        for (final String name : IGNORED) {
            if (stage.hasParam(name) && stage.isSet(stage.getParam(name)) && WARNED.add(estimator.uid() + " " + name)) {
                estimator
                        .log()
                        .warn(
                                "{} {}: {}={} is ignored; it shapes only MLlib's treeAggregate, and the sums of "
                                        + "this fit go through the switch (the input is stacked in blocks of about 1 MiB)",
                                estimator.name(),
                                estimator.uid(),
                                name,
                                stage.getOrDefault(stage.getParam(name)));
            }
        }
    }

    /**
     * Trains with stock MLlib ({@code stock}) because the params take another path in MLlib ({@code why}, e.g. a
     * solver without an optimizer loop), saying so once per application with {@code advice}, and reports the fit.
     */
    public static <M> M stock(
            final Estimator estimator,
            final SparkContext sc,
            final String why,
            final String advice,
            final Supplier<M> stock,
            final ToIntFunction<M> iterations) {
        return StockFallback.train(
                sc,
                estimator.log(),
                estimator.uid(),
                estimator.stockName(),
                new StockFallback.Reason(why, advice),
                stock,
                iterations,
                r -> estimator.reports().finish(estimator.uid(), estimator.log(), r));
    }

    /** The application's context. */
    public SparkContext sparkContext() {
        return sc;
    }

    /** Features per row, as the input has them. */
    public int numFeatures() {
        return numFeatures;
    }

    /**
     * The feature statistics and the label histogram ({@code labelCapacity} slots, more when a label is beyond
     * them): one barrier stage of two allreduces in fp64.
     */
    public FeatureSummary.Stats statistics(final int labelCapacity) {
        names.describe("feature statistics (one barrier stage, 2 allreduces)");
        return kept(StatisticsStage.run(batches, numFeatures, labelCapacity, use, estimator.uid()));
    }

    /**
     * The feature statistics and the label's mean and std ({@link FeatureSummary.Stats#labelMean()}, {@link
     * FeatureSummary.Stats#labelStd()}), no histogram: one barrier stage of two allreduces in fp64.
     */
    public FeatureSummary.Stats regressionStatistics() {
        names.describe("feature and label statistics (one barrier stage, 2 allreduces)");
        return kept(StatisticsStage.runWithLabel(batches, numFeatures, use, estimator.uid()));
    }

    private FeatureSummary.Stats kept(final StatisticsStage.Outcome outcome) {
        stats = outcome.stats();
        statisticsKey = outcome.key();
        instr.logNumExamples(stats.count());
        instr.logSumOfWeights(stats.weightSum());
        return stats;
    }

    /**
     * The standardization of the statistics, as the objective's copies take it: from the statistics their executor
     * kept, else from a broadcast that lives until the loop ends ({@link Standardization#kept}).
     */
    public Standardization standardization() {
        if (stats == null) {
            throw new IllegalStateException("no statistics yet");
        }
        destroyBroadcast();
        // for an executor that did not keep the statistics stage's result
        broadcast = JavaSparkContext.fromSparkContext(sc).broadcast(new MeanStd(stats.mean(), stats.std()));
        return Standardization.kept(statisticsKey, broadcast, stats.mean(), stats.std());
    }

    /**
     * Runs {@code optimizer} from {@code x0} over the cached input in the replicated loop, and returns its final
     * state (read the solution and history with the optimizer).
     *
     * @param maxIter            the estimator's maxIter
     * @param checkpointInterval evaluations per barrier stage (0: the whole fit in one)
     * @param precision          of the sums through the switch
     */
    public double[] run(
            final LinearObjective objective,
            final QuasiNewton optimizer,
            final double[] x0,
            final int maxIter,
            final int checkpointInterval,
            final SwitchMLConfig.Precision precision) {
        statisticsMs = clock.lapMs();
        try {
            fitted = FitLoop.run(
                    batches,
                    objective,
                    optimizer,
                    x0,
                    new FitLoop.Settings(
                            estimator.uid(),
                            estimator.log(),
                            maxIter,
                            checkpointInterval,
                            precision,
                            estimator.reports().listener()),
                    use,
                    names);
        } finally {
            destroyBroadcast();
        }
        fitMs = clock.lapMs();
        return fitted.state();
    }

    /** Reports the fit that {@link #run} ran with {@code optimizer}, ending with {@code model}; returns it. */
    public <M> M trained(final M model, final QuasiNewton optimizer) {
        if (fitted == null) {
            throw new IllegalStateException("the loop did not run");
        }
        final long modelMs = clock.lapMs();
        estimator
                .reports()
                .finish(
                        estimator.uid(),
                        estimator.log(),
                        new FitReport(
                                use.viaSwitch(),
                                optimizer.reason(fitted.state()).name(),
                                new FitReport.Timing(readMs, statisticsMs, fitMs, modelMs, fitted.msPerEvaluation()),
                                new FitReport.Loop(
                                        fitted.evaluations(),
                                        optimizer.iterations(fitted.state()),
                                        fitted.stages(),
                                        fitted.nonFinite()),
                                use.traffic()));
        return model;
    }

    /** Reports a fit that needed no training ({@code reason}, e.g. all labels equal), ending with {@code model}. */
    public <M> M withoutTraining(final M model, final String reason) {
        estimator
                .reports()
                .finish(
                        estimator.uid(),
                        estimator.log(),
                        new FitReport(
                                use.viaSwitch(),
                                reason + " (MLlib's model without training)",
                                new FitReport.Timing(readMs, clock.lapMs(), 0, 0, Double.NaN),
                                new FitReport.Loop(0, 0, 0, 0),
                                use.traffic()));
        return model;
    }

    private void destroyBroadcast() {
        if (broadcast != null) {
            broadcast.destroy();
            broadcast = null;
        }
    }

    /** Milliseconds between consecutive laps, from its creation on. */
    private static final class Stopwatch {
        private long last = System.nanoTime();

        long lapMs() {
            final long now = System.nanoTime();
            final long ms = (now - last) / 1_000_000;
            last = now;
            return ms;
        }
    }
}

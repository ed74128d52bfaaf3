package org.switchml.spark.ml.classification;

import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.spark.config.SwitchMLConfig;
import scala.Option;

import java.util.Locale;
import java.util.Optional;

/**
 * MLlib's {@link LogisticRegression} trained through the switch: a drop-in subclass with the same
 * params, defaults and validation, returning a genuine {@link LogisticRegressionModel} with its
 * training summary. The feature statistics and every loss/gradient evaluation are summed through the
 * switch inside barrier stages ({@link org.switchml.spark.ReplicatedLoop}): one allreduce of {@code [gradient, loss, weight
 * sum]} per evaluation, no Spark job or broadcast per iteration. The optimizers (L-BFGS, OWL-QN for L1
 * and elastic net, L-BFGS-B for bounds) are Java step machines that follow breeze as MLlib drives it, so
 * iterates and iteration counts track stock MLlib's.
 *
 * <p>SwitchML params besides MLlib's: {@link #precision()} ({@code fp64} or {@code fp32}, for the fit's
 * sums; the statistics always use fp64; unset, it follows {@code spark.switchml.precision}) and
 * {@link #checkpointInterval()} (return the optimizer state to the driver every that many evaluations, so a
 * failure retries from there; 0 = never).
 *
 * <p>The fit, step by step: the input read into cached batches ({@link InputBatches}), the statistics
 * ({@link StatisticsStage}), the problem with MLlib's checks ({@link LogisticProblem}, {@link LogisticChecks}),
 * the optimizer ({@link OptimizerChoice}) run in the replicated loop ({@link FitLoop}), the model
 * ({@link LogisticModels}); or stock MLlib where the switch cannot be used ({@link StockFallback}).
 *
 * <p>Partitions: any number, as they come (no repartition): each executor sums its tasks' parts in
 * memory and is one worker of the switch job.
 *
 * <p>Where the switch cannot be used, the fit is stock MLlib's, with one warning per application and the
 * reason in {@link #lastFit()} ({@code viaSwitch=false}): a cluster master without {@code spark.plugins}, or
 * {@code spark.dynamicAllocation.enabled=true} on a cluster, under which Spark refuses barrier stages
 * ({@link SwitchMLDriver#barrierStagesRefused}).
 */
public class SwitchMLLogisticRegression extends LogisticRegression {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLLogisticRegression.class);
    /** Label slots in the statistics when the label column carries no class count. */
    private static final int DEFAULT_LABEL_CAPACITY = 64;

    private final Param<String> precision = new Param<>(this, "precision",
            "precision of the sums through the switch during the fit: fp64 or fp32 (statistics always use fp64); "
                    + "unset, spark.switchml.precision decides",
            ParamValidators.inArray(new String[] {"fp64", "fp32"}));
    private final IntParam checkpointInterval = new IntParam(this, "checkpointInterval",
            "return the optimizer state to the driver every this many evaluations, so that a failure retries "
                    + "from there (0: never)", ParamValidators.gtEq(0));

    private LogisticRegressionModel initialModel;
    private transient volatile FitReport lastFit;
    private transient volatile FitListener listener;

    /** With a random uid. */
    public SwitchMLLogisticRegression() {
        this(Identifiable$.MODULE$.randomUID("switchmlLogreg"));
    }

    /** With the given uid (used by copy and load). */
    public SwitchMLLogisticRegression(final String uid) {
        super(uid);
        setDefault(precision, "fp64");
        setDefault(checkpointInterval, 0);
    }

    /**
     * Loads an estimator saved with {@code write().save(path)}: this one's, or a stock {@link LogisticRegression}'s
     * (then as the drop-in, with its uid and params). A Spark Connect server with spark-switchml's ML backend plugin
     * loads every {@code LogisticRegression} through this method.
     */
    public static SwitchMLLogisticRegression load(final String path) {
        final LogisticRegression saved = LogisticRegression.load(path);
        if (saved instanceof SwitchMLLogisticRegression dropIn) {
            return dropIn;
        }
        return saved.copyValues(new SwitchMLLogisticRegression(saved.uid()), ParamMap.empty());
    }

    /**
     * Precision of the fit's sums through the switch: {@code fp64} (the default) or {@code fp32}. Unset, the fit
     * uses {@code spark.switchml.precision} (the application's conf, or the thread's local property).
     */
    public Param<String> precision() {
        return precision;
    }

    /** @see #precision() */
    public String getPrecision() {
        return getOrDefault(precision);
    }

    /** @see #precision() */
    public SwitchMLLogisticRegression setPrecision(final String value) {
        set(precision, value.toLowerCase(Locale.ROOT));
        return this;
    }

    /** Evaluations between checkpoints of the optimizer state to the driver (0, the default: never). */
    public IntParam checkpointInterval() {
        return checkpointInterval;
    }

    /** @see #checkpointInterval() */
    public int getCheckpointInterval() {
        return (Integer) getOrDefault(checkpointInterval);
    }

    /** @see #checkpointInterval() */
    public SwitchMLLogisticRegression setCheckpointInterval(final int value) {
        set(checkpointInterval, value);
        return this;
    }

    /**
     * How the last fit of this instance went (null before the first), switch counters included. Copies
     * made by {@link #copy} (as {@code CrossValidator} and {@code fit(dataset, paramMap)} do) report to
     * their own {@code lastFit} and to the {@link #setListener listener} they share.
     */
    public FitReport lastFit() {
        return lastFit;
    }

    /**
     * Sets the listener told about every iteration of each fit while it runs, and about each fit's
     * end (null: none). Not a Spark ML param: it is not saved with the estimator; {@link #copy} keeps
     * it, so fits inside {@code Pipeline} or {@code CrossValidator} report to it as well (from several
     * threads at once with {@code CrossValidator.setParallelism}).
     */
    public SwitchMLLogisticRegression setListener(final FitListener value) {
        this.listener = value;
        return this;
    }

    /** @see #setListener */
    public FitListener getListener() {
        return listener;
    }

    /** MLlib keeps the initial model private; it is captured here as well. */
    @Override
    public LogisticRegression setInitialModel(final LogisticRegressionModel model) {
        this.initialModel = model;
        return super.setInitialModel(model);
    }

    /** MLlib's copy (params; as in MLlib, not the initial model), keeping the {@link #setListener listener}. */
    @Override
    public SwitchMLLogisticRegression copy(final ParamMap extra) {
        return ((SwitchMLLogisticRegression) defaultCopy(extra)).setListener(listener);
    }

    @Override
    public LogisticRegressionModel train(final Dataset<?> dataset) {
        final SparkContext sc = dataset.sparkSession().sparkContext();
        final Optional<StockFallback.Reason> stock = StockFallback.reason(sc);
        if (stock.isPresent()) {
            return StockFallback.train(sc, LOG, uid(), "LogisticRegression", stock.get(), () -> super.train(dataset),
                    m -> m.summary().totalIterations(), this::finish);
        }
        try (JobNames names = new JobNames(sc, "SwitchMLLogisticRegression " + uid())) {
            names.describe("reading the input into the cache");
            final JavaRDD<InstanceBatch> batches = InputBatches.cached(InputBatches.instances(dataset,
                    DatasetUtils$.MODULE$.checkClassificationLabels(getLabelCol(), Option.empty()), get(weightCol()),
                    getFeaturesCol()));
            try {
                return train(dataset, sc, batches, names);
            } finally {
                batches.unpersist(false);
            }
        }
    }

    /** MLlib's training on the cached batches, every sum through the switch; reports the fit at its end. */
    private LogisticRegressionModel train(final Dataset<?> dataset, final SparkContext sc,
                                          final JavaRDD<InstanceBatch> batches, final JobNames names) {
        final SwitchUse use = new SwitchUse(SwitchMLDriver.of(sc));
        final Stopwatch clock = new Stopwatch();
        final int numFeatures = InputBatches.numFeatures(batches);
        final long readMs = clock.lapMs();
        final Option<Object> metaClasses = MetadataUtils.getNumClasses(dataset.schema().apply(getLabelCol()));
        names.describe("feature statistics (one barrier stage, 2 allreduces)");
        final LogisticProblem problem = LogisticProblem.of(this, metaClasses, StatisticsStage.run(batches, numFeatures,
                metaClasses.isDefined() ? Math.max(1, (Integer) metaClasses.get()) : DEFAULT_LABEL_CAPACITY, use,
                uid()), numFeatures);
        if (getFitIntercept() && problem.constantLabel() && !LogisticChecks.bounded(this)) {
            LOG.warn("All labels are the same value and fitIntercept=true, so the coefficients will be zeros. "
                    + "Training is not needed.");
            final LogisticRegressionModel constant = LogisticModels.withoutTraining(this, dataset, problem);
            finish(new FitReport(use.viaSwitch(), "ALL_LABELS_EQUAL (MLlib's model without training)",
                    new FitReport.Timing(readMs, clock.lapMs(), 0, 0, Double.NaN), new FitReport.Loop(0, 0, 0, 0),
                    use.traffic()));
            return constant;
        }
        if (!getFitIntercept() && problem.constantLabel()) {
            LOG.warn("All labels belong to a single class and fitIntercept=false. It's a dangerous ground, so the "
                    + "algorithm may not converge.");
        }
        // for an executor that did not keep the statistics stage's result (see Standardization.kept)
        final Broadcast<MeanStd> statistics = JavaSparkContext.fromSparkContext(sc)
                .broadcast(new MeanStd(problem.stats().mean(), problem.stats().std()));
        final LogisticObjective objective;
        final QuasiNewton optimizer;
        final FitLoop.Fitted fitted;
        final long statisticsMs;
        try {
            objective = problem.objective(this, statistics);
            final double[][] bounds = problem.bounds(this, objective.layout());
            optimizer = problem.optimizer(this, objective.layout(), bounds);
            final double[] x0 = problem.initialPoint(this, initialModel, objective, bounds, LOG);
            statisticsMs = clock.lapMs();
            fitted = FitLoop.run(batches, objective, optimizer, x0, new FitLoop.Settings(uid(), LOG, getMaxIter(),
                    getCheckpointInterval(), precision(sc), listener), use, names);
        } finally {
            statistics.destroy();
        }
        final long fitMs = clock.lapMs();
        final LogisticRegressionModel model = LogisticModels.trained(this, dataset, problem, objective, optimizer,
                fitted.state());
        final long modelMs = clock.lapMs();
        finish(new FitReport(use.viaSwitch(), optimizer.reason(fitted.state()).name(),
                new FitReport.Timing(readMs, statisticsMs, fitMs, modelMs, fitted.msPerEvaluation()),
                new FitReport.Loop(fitted.evaluations(), optimizer.iterations(fitted.state()), fitted.stages(),
                        fitted.nonFinite()),
                use.traffic()));
        return model;
    }

    /** The fit's precision: the estimator's, else {@code spark.switchml.precision} as for every call. */
    private SwitchMLConfig.Precision precision(final SparkContext sc) {
        return isSet(precision) ? SwitchMLConfig.Precision.valueOf(getPrecision().toUpperCase(Locale.ROOT))
                : SwitchMLConfig.PRECISION.from(SwitchMLConfig.forCall(sc));
    }

    /** Reports a fit: {@link #lastFit()}, the log, and the listener. */
    private void finish(final FitReport report) {
        lastFit = report;
        LOG.info("{}: {}", uid(), report);
        final FitListener l = listener;
        if (l != null) {
            try {
                l.onFitEnd(report);
            } catch (final RuntimeException e) {
                LOG.warn("{}: the fit listener failed at the fit's end: {}", uid(), e.toString());
            }
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

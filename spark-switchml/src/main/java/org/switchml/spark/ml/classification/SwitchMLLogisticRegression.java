package org.switchml.spark.ml.classification;

import org.apache.spark.SparkContext;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.classification.BinaryLogisticRegressionTrainingSummaryImpl;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.classification.LogisticRegressionTrainingSummary;
import org.apache.spark.ml.classification.LogisticRegressionTrainingSummaryImpl;
import org.apache.spark.ml.classification.ProbabilisticClassificationModel;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.DenseMatrix;
import org.apache.spark.ml.linalg.Matrix;
import org.apache.spark.ml.linalg.SparseMatrix;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLPlugin;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.optim.Lbfgs;
import org.switchml.optim.Lbfgsb;
import org.switchml.optim.Owlqn;
import org.switchml.optim.QuasiNewton;
import scala.Option;
import scala.Tuple3;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * MLlib's {@link LogisticRegression} trained through the switch: a drop-in subclass with the same
 * params, defaults and validation, returning a genuine {@link LogisticRegressionModel} with its
 * training summary. The feature statistics and every loss/gradient evaluation are summed through the
 * switch inside barrier stages ({@link ReplicatedLoop}): one allreduce of {@code [gradient, loss, weight
 * sum]} per evaluation, no Spark job or broadcast per iteration. The optimizers (L-BFGS, OWL-QN for L1
 * and elastic net, L-BFGS-B for bounds) are Java step machines that follow breeze as MLlib drives it, so
 * iterates and iteration counts track stock MLlib's.
 *
 * <p>SwitchML params besides MLlib's: {@link #precision()} ({@code fp64} or {@code fp32}, for the fit's
 * sums; the statistics always use fp64; unset, it follows {@code spark.switchml.precision}) and {@link #checkpointInterval()} (return the optimizer state
 * to the driver every that many evaluations, so a failure retries from there; 0 = never).
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
    /** Applications already warned that they train with stock MLlib, with the reason they were given. */
    private static final Set<String> WARNED_STOCK = ConcurrentHashMap.newKeySet();
    private static final String JOB_DESCRIPTION = "spark.job.description";

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

    /** Loads an estimator saved with {@code write().save(path)}. */
    public static SwitchMLLogisticRegression load(final String path) {
        return (SwitchMLLogisticRegression) LogisticRegression.load(path);
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

    private boolean bounded() {
        return isSet(lowerBoundsOnCoefficients()) || isSet(upperBoundsOnCoefficients())
                || isSet(lowerBoundsOnIntercepts()) || isSet(upperBoundsOnIntercepts());
    }

    private boolean multinomial(final int numClasses) {
        final String family = getFamily().toLowerCase(Locale.ROOT);
        switch (family) {
            case "binomial":
                if (numClasses != 1 && numClasses != 2) {
                    throw new IllegalArgumentException("requirement failed: Binomial family only supports 1 or 2 "
                            + "outcome classes but found " + numClasses + ".");
                }
                return false;
            case "multinomial":
                return true;
            case "auto":
                return numClasses > 2;
            default:
                throw new IllegalArgumentException("Unsupported family: " + family);
        }
    }

    /**
     * Whether this fit can use the switch: a local master starts the embedded switch by itself; a cluster
     * master needs the plugin, whose driver side tells the executors where the switch is.
     */
    private static boolean switchAvailable(final SparkContext sc) {
        if (sc.isLocal()) {
            return true;
        }
        final String plugin = SwitchMLPlugin.class.getName();
        for (final String key : new String[] {"spark.plugins", "spark.plugins.defaultList"}) {
            for (final String name : sc.conf().get(key, "").split(",")) {
                if (name.trim().equals(plugin)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public LogisticRegressionModel train(final Dataset<?> dataset) {
        final SparkContext sc = dataset.sparkSession().sparkContext();
        if (!switchAvailable(sc)) {
            return trainStock(sc, dataset, "master " + sc.master() + " without spark.plugins="
                    + SwitchMLPlugin.class.getName(), "Its executors learn the switch from the driver plugin: submit "
                    + "with bin/switchml-submit, or set spark.plugins and put the spark-switchml jar on the executors "
                    + "(--jars).");
        }
        final Optional<String> refused = SwitchMLDriver.barrierStagesRefused(sc);
        if (refused.isPresent()) {
            return trainStock(sc, dataset, refused.get(), "Set spark.dynamicAllocation.enabled=false to aggregate "
                    + "through the switch.");
        }
        final String previousDescription = sc.getLocalProperty(JOB_DESCRIPTION);
        try {
            return trainWithSwitch(sc, dataset, previousDescription);
        } finally {
            sc.setLocalProperty(JOB_DESCRIPTION, previousDescription);
        }
    }

    /**
     * Stock MLlib's training, when the switch cannot be used ({@code why}; {@code advice} says what to change):
     * one warning per application and reason.
     */
    private LogisticRegressionModel trainStock(final SparkContext sc, final Dataset<?> dataset, final String why,
                                               final String advice) {
        if (WARNED_STOCK.add(sc.applicationId() + ": " + why)) {
            LOG.warn("{}: {}; training with stock MLlib LogisticRegression instead (same model, no switch). {} This "
                    + "warning is given once per application.", uid(), why, advice);
        }
        final long t0 = System.nanoTime();
        final LogisticRegressionModel m = super.train(dataset);
        finish(new FitReport(false, "stock MLlib (" + why + ")",
                new FitReport.Timing(0, 0, (System.nanoTime() - t0) / 1_000_000, 0, Double.NaN),
                new FitReport.Loop(-1, m.summary().totalIterations(), 0, 0), FitReport.SwitchTraffic.NONE));
        return m;
    }

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

    /** Names the Spark jobs that follow, after the caller's own description if it set one. */
    private void describe(final SparkContext sc, final String callers, final String what) {
        final String text = "SwitchMLLogisticRegression " + uid() + ": " + what;
        sc.setJobDescription(callers == null || callers.isEmpty() ? text : callers + " / " + text);
    }

    private LogisticRegressionModel trainWithSwitch(final SparkContext sc, final Dataset<?> dataset,
                                                    final String callers) {
        describe(sc, callers, "reading the input into the cache");
        final JavaRDD<InstanceBatch> batches = batches(instances(dataset)).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            return train(dataset, sc, batches, callers);
        } finally {
            batches.unpersist(false);
        }
    }

    /** The label, weight and features of every row, checked as MLlib checks them. */
    private JavaRDD<Instance> instances(final Dataset<?> dataset) {
        final Option<String> weightCol = get(weightCol());
        final Dataset<Row> selected = dataset.select(
                DatasetUtils$.MODULE$.checkClassificationLabels(getLabelCol(), Option.empty()),
                DatasetUtils$.MODULE$.checkNonNegativeWeights(weightCol),
                DatasetUtils$.MODULE$.checkNonNanVectors(getFeaturesCol()));
        return selected.toJavaRDD().map(r -> new Instance(r.getDouble(0), r.getDouble(1), (Vector) r.get(2)));
    }

    /** MLlib's training on the cached batches, every sum through the switch; reports the fit at its end. */
    private LogisticRegressionModel train(final Dataset<?> dataset, final SparkContext sc,
                                          final JavaRDD<InstanceBatch> batches, final String callers) {
        final SwitchUse use = new SwitchUse(SwitchMLDriver.of(sc));
        final Stopwatch clock = new Stopwatch();
        final int numFeatures = readInput(batches);
        final long readMs = clock.lapMs();
        final Problem problem = statistics(dataset, sc, batches, numFeatures, use, callers);
        if (getFitIntercept() && problem.constantLabel() && !bounded()) {
            return modelWithoutTraining(dataset, problem, use, readMs, clock);
        }
        if (!getFitIntercept() && problem.constantLabel()) {
            LOG.warn("All labels belong to a single class and fitIntercept=false. It's a dangerous ground, so the "
                    + "algorithm may not converge.");
        }

        // for an executor that did not keep the statistics stage's result (see LogisticObjective.fromStatistics)
        final Broadcast<MeanStd> statistics = JavaSparkContext.fromSparkContext(sc)
                .broadcast(new MeanStd(problem.stats().mean(), problem.stats().std()));
        final LogisticObjective objective = objective(problem, statistics);
        final double[][] bounds = bounded()
                ? bounds(problem.sets(), numFeatures, problem.stats().std(), objective.dim()) : null;
        final QuasiNewton optimizer = optimizer(objective, problem.sets(), numFeatures, problem.stats().std(), bounds);
        final double[] x0 = initialPoint(objective, problem, bounds);
        final long statisticsMs = clock.lapMs();

        final Fitted fitted;
        try {
            fitted = fit(sc, batches, objective, optimizer, x0, use, callers);
        } finally {
            statistics.destroy();
        }
        final long fitMs = clock.lapMs();

        final LogisticRegressionModel model = model(dataset, problem, objective, optimizer, fitted.state());
        final long modelMs = clock.lapMs();
        finish(new FitReport(use.viaSwitch(), optimizer.reason(fitted.state()).name(),
                new FitReport.Timing(readMs, statisticsMs, fitMs, modelMs, fitted.msPerEvaluation()),
                new FitReport.Loop(fitted.evaluations(), optimizer.iterations(fitted.state()), fitted.stages(),
                        fitted.nonFinite()),
                use.traffic()));
        return model;
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

    /**
     * Reads the input into the cache with one ordinary job and returns the number of features: bad input
     * fails here exactly as in MLlib (a failure inside the barrier stages would be retried as a stage and
     * lose its message).
     */
    private static int readInput(final JavaRDD<InstanceBatch> batches) {
        final long[] shape = batches.aggregate(new long[] {Long.MAX_VALUE, Long.MIN_VALUE, 0},
                (acc, b) -> new long[] {Math.min(acc[0], b.numFeatures()), Math.max(acc[1], b.numFeatures()),
                    acc[2] + b.size()},
                (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1]), a[2] + b[2]});
        if (shape[2] == 0) {
            throw new IllegalArgumentException("requirement failed: Nothing has been added to this summarizer.");
        }
        if (shape[0] != shape[1]) {
            throw new IllegalArgumentException("Dimensions mismatch when adding new sample. Expecting " + shape[0]
                    + " but got " + shape[1] + ".");
        }
        return (int) shape[0];
    }

    /**
     * What the statistics tell about the training problem.
     *
     * @param numFeatures features per row
     * @param numClasses  classes: the label column's, else the largest label plus one
     * @param multinomial whether the family is multinomial
     * @param stats       the feature statistics and the weight of each label
     * @param statisticsKey under which the executors kept the statistics
     */
    private record Problem(int numFeatures, int numClasses, boolean multinomial, FeatureSummary.Stats stats,
                           String statisticsKey) {
        /** Coefficient sets: one per class (multinomial), else one. */
        int sets() {
            return multinomial ? numClasses : 1;
        }

        /** Whether a single label carries all the weight. */
        boolean constantLabel() {
            int nonZeroClasses = 0;
            for (final double w : stats.histogram()) {
                if (w != 0.0) {
                    nonZeroClasses++;
                }
            }
            return nonZeroClasses == 1;
        }

        /** The label with the most weight (the first of equals). */
        int mostFrequentLabel() {
            final double[] histogram = stats.histogram();
            int argmax = 0;
            for (int c = 0; c < histogram.length; c++) {
                if (histogram[c] > histogram[argmax]) {
                    argmax = c;
                }
            }
            return argmax;
        }
    }

    /**
     * The feature statistics and the label histogram through the switch (one barrier stage; a second one
     * when the labels outnumber the slots), then the classes and the family, with MLlib's checks of the
     * labels and of the params whose shape depends on the classes.
     */
    private Problem statistics(final Dataset<?> dataset, final SparkContext sc, final JavaRDD<InstanceBatch> batches,
                               final int numFeatures, final SwitchUse use, final String callers) {
        final Option<Object> metaClasses = MetadataUtils.getNumClasses(dataset.schema().apply(getLabelCol()));
        describe(sc, callers, "feature statistics (one barrier stage, 2 allreduces)");
        String key = statisticsKey();
        FeatureSummary.Stats stats = summarize(batches.rdd(), numFeatures,
                metaClasses.isDefined() ? Math.max(1, (Integer) metaClasses.get()) : DEFAULT_LABEL_CAPACITY, use, key);
        if (stats.labelOverflow() > 0) {
            // more classes than slots: find the largest label, then count again
            final double maxLabel = batches.map(b -> {
                double max = Double.NEGATIVE_INFINITY;
                for (int r = 0; r < b.size(); r++) {
                    max = Math.max(max, b.label(r));
                }
                return max;
            }).reduce(Math::max);
            key = statisticsKey();
            stats = summarize(batches.rdd(), numFeatures, (int) maxLabel + 1, use, key);
        }
        if (!(stats.weightSum() > 0)) {
            throw new IllegalArgumentException("requirement failed: Nothing has been added to this summarizer.");
        }
        final int labels = stats.histogram().length;
        final int numClasses;
        if (metaClasses.isDefined()) {
            numClasses = (Integer) metaClasses.get();
            if (numClasses < labels) {
                throw new IllegalArgumentException("requirement failed: Specified number of classes " + numClasses
                        + " was less than the number of unique labels " + labels + ".");
            }
        } else {
            numClasses = labels;
        }
        if (stats.invalidLabels() != 0) {
            throw SwitchMLLogisticRegression.<RuntimeException>unchecked(new SparkException("Classification labels "
                    + "should be in [0 to " + (numClasses - 1) + "]. Found " + stats.invalidLabels()
                    + " invalid labels."));
        }
        final Problem problem = new Problem(numFeatures, numClasses, multinomial(numClasses), stats, key);
        if (bounded()) {
            checkBoundShapes(problem.sets(), numFeatures);
        }
        if (isDefined(thresholds()) && getThresholds().length != numClasses) {
            throw new IllegalArgumentException("requirement failed: " + getClass().getSimpleName()
                    + ".train() called with non-matching numClasses and thresholds.length. numClasses=" + numClasses
                    + ", but thresholds has length " + getThresholds().length);
        }
        return problem;
    }

    /** A key for one statistics stage's result on the executors: unique in every JVM. */
    private String statisticsKey() {
        return uid() + "/" + UUID.randomUUID();
    }

    /**
     * The statistics through the switch, always in fp64: std and histogram feed everything else. Every
     * executor keeps the mean and std under {@code key}.
     */
    private static FeatureSummary.Stats summarize(final RDD<InstanceBatch> instances, final int numFeatures,
                                                  final int labelCapacity, final SwitchUse use, final String key) {
        final FeatureSummary summary = new FeatureSummary(numFeatures, labelCapacity, key);
        final ReplicatedLoop.Result r = ReplicatedLoop.run(instances, summary.initialState(), summary.vectorLength(),
                summary, new ReplicatedLoop.Options(FeatureSummary.rounds(), 0, 0, SwitchMLConfig.Precision.FP64));
        use.ran(r, summary.vectorLength(), true);
        return summary.stats(r.state());
    }

    /**
     * All labels are equal and the intercepts are free: MLlib's model without training (zero coefficients,
     * infinite intercepts).
     */
    private LogisticRegressionModel modelWithoutTraining(final Dataset<?> dataset, final Problem problem,
                                                         final SwitchUse use, final long readMs,
                                                         final Stopwatch clock) {
        LOG.warn("All labels are the same value and fitIntercept=true, so the coefficients will be zeros. "
                + "Training is not needed.");
        final int sets = problem.sets();
        final int numClasses = problem.numClasses();
        final Matrix coef = new SparseMatrix(sets, problem.numFeatures(), new int[sets + 1], new int[0], new double[0],
                true).compressed();
        final Vector intercept = problem.multinomial()
                ? Vectors.sparse(numClasses, new int[] {problem.mostFrequentLabel()},
                        new double[] {Double.POSITIVE_INFINITY})
                : Vectors.dense(numClasses == 2 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY);
        final LogisticRegressionModel constant = createModel(dataset, numClasses, problem.multinomial(), coef,
                intercept, new double[] {0.0});
        final long statisticsMs = clock.lapMs();
        finish(new FitReport(use.viaSwitch(), "ALL_LABELS_EQUAL (MLlib's model without training)",
                new FitReport.Timing(readMs, statisticsMs, 0, 0, Double.NaN), new FitReport.Loop(0, 0, 0, 0),
                use.traffic()));
        return constant;
    }

    /**
     * MLlib's objective in the standardized space; centered when the intercepts are fitted and unbounded. Its
     * copies on the executors take the statistics that their executor kept, else {@code statistics}.
     */
    private LogisticObjective objective(final Problem problem, final Broadcast<MeanStd> statistics) {
        final boolean fitWithMean = getFitIntercept()
                && (!isSet(lowerBoundsOnIntercepts()) || allEqual(getLowerBoundsOnIntercepts().toArray(), Double.NEGATIVE_INFINITY))
                && (!isSet(upperBoundsOnIntercepts()) || allEqual(getUpperBoundsOnIntercepts().toArray(), Double.POSITIVE_INFINITY));
        final double regL2 = (1.0 - getElasticNetParam()) * getRegParam();
        return LogisticObjective.fromStatistics(problem.numFeatures(), problem.numClasses(), problem.multinomial(),
                getFitIntercept(), fitWithMean, problem.stats().mean(), problem.stats().std(), regL2,
                getStandardization(), problem.statisticsKey(), statistics);
    }

    /**
     * The optimizer's first point, in the objective's centered space: the initial model's coefficients
     * when their shape fits (else they are ignored with MLlib's warning), the intercepts from the label
     * histogram otherwise, within the bounds.
     */
    private double[] initialPoint(final LogisticObjective objective, final Problem problem, final double[][] bounds) {
        final int sets = problem.sets();
        final int numFeatures = problem.numFeatures();
        double[] initCoef = null;
        double[] initIntercept = null;
        if (initialModel != null) {
            final Matrix m = initialModel.coefficientMatrix();
            if (m.numRows() == sets && m.numCols() == numFeatures && initialModel.interceptVector().size() == sets
                    && initialModel.getFitIntercept() == getFitIntercept()) {
                initCoef = new double[sets * numFeatures];
                for (int c = 0; c < sets; c++) {
                    for (int j = 0; j < numFeatures; j++) {
                        initCoef[c * numFeatures + j] = m.apply(c, j);
                    }
                }
                initIntercept = initialModel.interceptVector().toArray();
            } else {
                LOG.warn("Initial coefficients will be ignored! Its dimensions ({}, {}) did not match the expected size "
                        + "({}, {})", m.numRows(), m.numCols(), sets, numFeatures);
            }
        }
        final double[] x0 = objective.initialSolution(problem.stats().histogram(), initCoef, initIntercept,
                bounds == null ? null : bounds[0], bounds == null ? null : bounds[1]);
        objective.toCentered(x0);
        return x0;
    }

    /** The model at the optimizer's solution, back in the original space, with MLlib's training summary. */
    private LogisticRegressionModel model(final Dataset<?> dataset, final Problem problem,
                                          final LogisticObjective objective, final QuasiNewton optimizer,
                                          final double[] state) {
        final double[] solution = optimizer.solution(state);
        objective.fromCentered(solution);
        final double[][] model = objective.toModel(solution, getRegParam() == 0.0, bounded());
        final Matrix coefficients = new DenseMatrix(problem.sets(), problem.numFeatures(), model[0], true).compressed();
        final Vector intercepts = getFitIntercept() || !problem.multinomial()
                ? Vectors.dense(model[1]).compressed()
                : Vectors.sparse(problem.sets(), new int[0], new double[0]).compressed();
        return createModel(dataset, problem.numClasses(), problem.multinomial(), coefficients, intercepts,
                optimizer.objectiveHistory(state));
    }

    /** The loop's outcome over all its stages. */
    private record Fitted(double[] state, int evaluations, int stages, double msPerEvaluation, int nonFinite) {
    }

    /**
     * Runs the optimizer in the replicated loop, in the estimator's precision: one barrier stage, or one
     * per {@code checkpointInterval} evaluations, each named by its job description (Spark fixes a job's
     * description when it is submitted, so it names the stage's span, not the current iteration; that one
     * is in the log).
     */
    private Fitted fit(final SparkContext sc, final JavaRDD<InstanceBatch> batches, final LogisticObjective objective,
                       final QuasiNewton optimizer, final double[] x0, final SwitchUse use, final String callers) {
        final int maxEvaluations = LogisticFit.maxEvaluations(getMaxIter(), optimizer.maxEvaluationsPerSearch());
        final int interval = getCheckpointInterval();
        // A precision the user did not set on the estimator comes from spark.switchml.precision, as for every call.
        final SwitchMLConfig.Precision precision = isSet(this.precision)
                ? SwitchMLConfig.Precision.valueOf(getPrecision().toUpperCase(Locale.ROOT))
                : SwitchMLConfig.PRECISION.from(SwitchMLConfig.forCall(sc));
        final boolean fp64 = precision == SwitchMLConfig.Precision.FP64;
        final FitProgress progress = new FitProgress(uid(), getMaxIter(),
                objective.vectorLength() * (fp64 ? 8.0 : 4.0) / 1e6, listener, use);
        final LogisticFit body = new LogisticFit(objective, optimizer);
        double[] state = optimizer.start(x0);
        int evaluations = 0;
        int stages = 0;
        double steadyMs = 0;
        int steadyCount = 0;
        while (evaluations < maxEvaluations && !optimizer.done(state)) {
            final int span = interval > 0 ? Math.min(interval, maxEvaluations - evaluations)
                    : maxEvaluations - evaluations;
            final int fromIteration = optimizer.iterations(state);
            final int toIteration = Math.min(getMaxIter(), fromIteration + span);
            describe(sc, callers, String.format(Locale.ROOT, "iterations %d to <=%d of %d (evaluations %d-%d%s)",
                    fromIteration, toIteration, getMaxIter(), evaluations + 1, evaluations + span,
                    interval > 0 ? ", then a checkpoint" : ", the whole fit in this barrier stage"));
            final ReplicatedLoop.Result r = ReplicatedLoop.run(batches.rdd(), state, objective.vectorLength(), body,
                    new ReplicatedLoop.Options(span, 0, 0, precision), progress);
            use.ran(r, objective.vectorLength(), fp64);
            state = r.state();
            evaluations += r.iterations();
            stages++;
            // steady time per evaluation: task 0's clock between updates of one stage
            final List<double[]> scalars = r.scalars();
            for (int i = 1; i < scalars.size(); i++) {
                steadyMs += scalars.get(i)[LogisticFit.CLOCK] - scalars.get(i - 1)[LogisticFit.CLOCK];
                steadyCount++;
            }
            if (r.iterations() == 0) {
                break;
            }
        }
        return new Fitted(state, evaluations, stages, steadyCount == 0 ? Double.NaN : steadyMs / steadyCount,
                progress.nonFiniteEvaluations());
    }

    /**
     * The rows in batches of about 1 MiB of dense features, several per partition, unscaled; every row
     * of a partition must have the first row's size.
     */
    private static JavaRDD<InstanceBatch> batches(final JavaRDD<Instance> instances) {
        return instances.mapPartitions(it -> {
            final List<InstanceBatch> out = new ArrayList<>();
            InstanceBatch.Builder b = null;
            int numFeatures = -1;
            while (it.hasNext()) {
                final Instance in = it.next();
                final Vector v = in.features();
                if (b == null) {
                    numFeatures = v.size();
                    final int rows = (int) Math.max(16, Math.min(4096, (1L << 20) / (8L * Math.max(1, numFeatures))));
                    b = new InstanceBatch.Builder(numFeatures, rows);
                } else if (v.size() != numFeatures) {
                    throw new IllegalArgumentException("Dimensions mismatch when adding new sample. Expecting "
                            + numFeatures + " but got " + v.size() + ".");
                }
                if (v instanceof SparseVector sv) {
                    b.add(in.label(), in.weight(), sv.indices(), sv.values(), sv.indices().length);
                } else {
                    b.addDense(in.label(), in.weight(), v.toArray());
                }
                if (b.full()) {
                    out.add(b.build());
                }
            }
            if (b != null && b.rows() > 0) {
                out.add(b.build());
            }
            return out.iterator();
        });
    }

    private QuasiNewton optimizer(final LogisticObjective objective, final int sets, final int numFeatures,
                                  final double[] std, final double[][] bounds) {
        final int n = objective.dim();
        if (getElasticNetParam() == 0.0 || getRegParam() == 0.0) {
            return bounds != null ? new Lbfgsb(bounds[0], bounds[1], 10, getMaxIter(), getTol())
                    : new Lbfgs(n, 10, getMaxIter(), getTol());
        }
        final double l1 = getElasticNetParam() * getRegParam();
        final boolean standardization = getStandardization();
        final boolean fitIntercept = getFitIntercept();
        final double[] perFeature = standardization ? null : std.clone();
        return new Owlqn(n, 10, getMaxIter(), getTol(), i -> {
            if (fitIntercept && i >= numFeatures * sets) {
                return 0.0; // the intercepts are not penalized
            }
            if (perFeature == null) {
                return l1;
            }
            final double s = perFeature[i / sets];
            return s != 0.0 ? l1 / s : 0.0; // as if the data were not standardized
        });
    }

    /** Bounds in the training space (coefficients times std), MLlib's column-major layout. */
    private double[][] bounds(final int sets, final int numFeatures, final double[] std, final int dim) {
        final double[] lower = new double[dim];
        final double[] upper = new double[dim];
        Arrays.fill(lower, Double.NEGATIVE_INFINITY);
        Arrays.fill(upper, Double.POSITIVE_INFINITY);
        for (int i = 0; i < dim; i++) {
            final int set = i % sets;
            final int feature = i / sets;
            if (feature < numFeatures) {
                if (isSet(lowerBoundsOnCoefficients())) {
                    lower[i] = getLowerBoundsOnCoefficients().apply(set, feature) * std[feature];
                }
                if (isSet(upperBoundsOnCoefficients())) {
                    upper[i] = getUpperBoundsOnCoefficients().apply(set, feature) * std[feature];
                }
            } else {
                if (isSet(lowerBoundsOnIntercepts())) {
                    lower[i] = getLowerBoundsOnIntercepts().apply(set);
                }
                if (isSet(upperBoundsOnIntercepts())) {
                    upper[i] = getUpperBoundsOnIntercepts().apply(set);
                }
            }
        }
        return new double[][] {lower, upper};
    }

    private void checkBoundShapes(final int sets, final int numFeatures) {
        if (isSet(lowerBoundsOnCoefficients())) {
            final Matrix m = getLowerBoundsOnCoefficients();
            require(m.numRows() == sets && m.numCols() == numFeatures, "The shape of LowerBoundsOnCoefficients must be "
                    + "compatible with (1, number of features) for binomial regression, or (number of classes, number "
                    + "of features) for multinomial regression, but found: (" + m.numRows() + ", " + m.numCols() + ").");
        }
        if (isSet(upperBoundsOnCoefficients())) {
            final Matrix m = getUpperBoundsOnCoefficients();
            require(m.numRows() == sets && m.numCols() == numFeatures, "The shape of upperBoundsOnCoefficients must be "
                    + "compatible with (1, number of features) for binomial regression, or (number of classes, number "
                    + "of features) for multinomial regression, but found: (" + m.numRows() + ", " + m.numCols() + ").");
        }
        if (isSet(lowerBoundsOnIntercepts())) {
            require(getLowerBoundsOnIntercepts().size() == sets, "The size of lowerBoundsOnIntercepts must be equal to 1 "
                    + "for binomial regression, or the number of classes for multinomial regression, but found: "
                    + getLowerBoundsOnIntercepts().size() + ".");
        }
        if (isSet(upperBoundsOnIntercepts())) {
            require(getUpperBoundsOnIntercepts().size() == sets, "The size of upperBoundsOnIntercepts must be equal to 1 "
                    + "for binomial regression, or the number of classes for multinomial regression, but found: "
                    + getUpperBoundsOnIntercepts().size() + ".");
        }
        if (isSet(lowerBoundsOnCoefficients()) && isSet(upperBoundsOnCoefficients())) {
            require(ordered(getLowerBoundsOnCoefficients().toArray(), getUpperBoundsOnCoefficients().toArray()),
                    "LowerBoundsOnCoefficients should always be less than or equal to upperBoundsOnCoefficients, but "
                            + "found: lowerBoundsOnCoefficients = " + getLowerBoundsOnCoefficients()
                            + ", upperBoundsOnCoefficients = " + getUpperBoundsOnCoefficients() + ".");
        }
        if (isSet(lowerBoundsOnIntercepts()) && isSet(upperBoundsOnIntercepts())) {
            require(ordered(getLowerBoundsOnIntercepts().toArray(), getUpperBoundsOnIntercepts().toArray()),
                    "LowerBoundsOnIntercepts should always be less than or equal to upperBoundsOnIntercepts, but "
                            + "found: lowerBoundsOnIntercepts = " + getLowerBoundsOnIntercepts()
                            + ", upperBoundsOnIntercepts = " + getUpperBoundsOnIntercepts() + ".");
        }
    }

    /** Throws a checked exception (MLlib's SparkException) without declaring it, as Scala code does. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException unchecked(final Throwable t) throws E {
        throw (E) t;
    }

    private static void require(final boolean condition, final String message) {
        if (!condition) {
            throw new IllegalArgumentException("requirement failed: " + message);
        }
    }

    private static boolean ordered(final double[] lower, final double[] upper) {
        for (int i = 0; i < Math.min(lower.length, upper.length); i++) {
            if (!(lower[i] <= upper[i])) {
                return false;
            }
        }
        return true;
    }

    private static boolean allEqual(final double[] values, final double v) {
        for (final double x : values) {
            if (x != v) {
                return false;
            }
        }
        return true;
    }

    /** The stock model with params copied and MLlib's training summary attached. */
    private LogisticRegressionModel createModel(final Dataset<?> dataset, final int numClasses,
                                                final boolean multinomial, final Matrix coefficients,
                                                final Vector intercepts, final double[] objectiveHistory) {
        final LogisticRegressionModel model = copyValues(
                new LogisticRegressionModel(uid(), coefficients, intercepts, numClasses, multinomial), ParamMap.empty());
        final String weightColName = isDefined(weightCol()) ? getWeightCol() : "weightCol";
        final Tuple3<ProbabilisticClassificationModel<Vector, LogisticRegressionModel>, String, String> found =
                model.findSummaryModel();
        final Dataset<Row> predictions = found._1().transform(dataset);
        final LogisticRegressionTrainingSummary summary = numClasses <= 2
                ? new BinaryLogisticRegressionTrainingSummaryImpl(predictions, found._2(), found._3(), getLabelCol(),
                        getFeaturesCol(), weightColName, objectiveHistory)
                : new LogisticRegressionTrainingSummaryImpl(predictions, found._2(), found._3(), getLabelCol(),
                        getFeaturesCol(), weightColName, objectiveHistory);
        model.setSummary(Option.apply(summary));
        return model;
    }
}

package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.spark.ml.linear.LogisticObjective;
import org.switchml.spark.ml.linear.FitListener;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.spark.ml.linear.FitReports;
import org.switchml.spark.ml.linear.LinearFit;
import org.switchml.spark.ml.linear.SwitchMLParams;
import scala.Option;

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
 * sums; the statistics always use fp64; unset, it follows {@code spark.switchml.precision}) and
 * {@link #checkpointInterval()} (return the optimizer state to the driver every that many evaluations, so a
 * failure retries from there; 0 = never).
 *
 * <p>The fit, step by step ({@link LinearFit}): the input read into cached batches, the statistics, the problem
 * with MLlib's checks ({@link LogisticProblem}, {@link LogisticChecks}), the optimizer MLlib would pick run in the
 * replicated loop, the model ({@link LogisticModels}); or stock MLlib where the switch cannot be used.
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

    private final Param<String> precision = SwitchMLParams.precision(this);
    private final IntParam checkpointInterval = SwitchMLParams.checkpointInterval(this);

    private LogisticRegressionModel initialModel;
    private final FitReports reports = new FitReports();

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
        set(precision, SwitchMLParams.normalized(value));
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
        return reports.last();
    }

    /**
     * Sets the listener told about every iteration of each fit while it runs, and about each fit's
     * end (null: none). Not a Spark ML param: it is not saved with the estimator; {@link #copy} keeps
     * it, so fits inside {@code Pipeline} or {@code CrossValidator} report to it as well (from several
     * threads at once with {@code CrossValidator.setParallelism}).
     */
    public SwitchMLLogisticRegression setListener(final FitListener value) {
        reports.listener(value);
        return this;
    }

    /** @see #setListener */
    public FitListener getListener() {
        return reports.listener();
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
        return ((SwitchMLLogisticRegression) defaultCopy(extra)).setListener(getListener());
    }

    @Override
    public LogisticRegressionModel train(final Dataset<?> dataset) {
        return LinearFit.train(new LinearFit.Estimator(uid(), "SwitchMLLogisticRegression", "LogisticRegression", LOG,
                        reports), dataset,
                new LinearFit.Columns(DatasetUtils$.MODULE$.checkClassificationLabels(getLabelCol(), Option.empty()),
                        get(weightCol()), getFeaturesCol()),
                () -> super.train(dataset), m -> m.summary().totalIterations(), fit -> train(dataset, fit));
    }

    /** MLlib's training on the cached batches, every sum through the switch. */
    private LogisticRegressionModel train(final Dataset<?> dataset, final LinearFit fit) {
        final int numFeatures = fit.numFeatures();
        final Option<Object> metaClasses = MetadataUtils.getNumClasses(dataset.schema().apply(getLabelCol()));
        final LogisticProblem problem = LogisticProblem.of(this, metaClasses, fit.statistics(metaClasses.isDefined()
                ? Math.max(1, (Integer) metaClasses.get()) : DEFAULT_LABEL_CAPACITY), numFeatures);
        if (getFitIntercept() && problem.constantLabel() && !LogisticChecks.bounded(this)) {
            LOG.warn("All labels are the same value and fitIntercept=true, so the coefficients will be zeros. "
                    + "Training is not needed.");
            return fit.withoutTraining(LogisticModels.withoutTraining(this, dataset, problem), "ALL_LABELS_EQUAL");
        }
        if (!getFitIntercept() && problem.constantLabel()) {
            LOG.warn("All labels belong to a single class and fitIntercept=false. It's a dangerous ground, so the "
                    + "algorithm may not converge.");
        }
        final LogisticObjective objective = problem.objective(this, fit.standardization());
        final double[][] bounds = problem.bounds(this, objective.layout());
        final QuasiNewton optimizer = problem.optimizer(this, objective.layout(), bounds);
        final double[] x0 = problem.initialPoint(this, initialModel, objective, bounds, LOG);
        final double[] state = fit.run(objective, optimizer, x0, getMaxIter(), getCheckpointInterval(),
                SwitchMLParams.precision(fit.sparkContext(), this, precision));
        return fit.trained(LogisticModels.trained(this, dataset, problem, objective, optimizer, state), optimizer);
    }
}

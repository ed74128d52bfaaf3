package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ml.linear.LinearFit;
import org.switchml.spark.ml.linear.LogisticObjective;
import org.switchml.spark.ml.linear.SwitchMLEstimator;
import org.switchml.spark.ml.linear.SwitchMLParams;
import org.switchml.spark.ml.linear.SwitchMLParts;
import scala.Option;

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
 * ({@link org.switchml.spark.SwitchMLDriver#barrierStagesRefused}).
 */
public class SwitchMLLogisticRegression extends LogisticRegression
        implements SwitchMLEstimator<SwitchMLLogisticRegression> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLLogisticRegression.class);
    /** Label slots in the statistics when the label column carries no class count. */
    private static final int DEFAULT_LABEL_CAPACITY = 64;

    private LogisticRegressionModel initialModel;
    private final SwitchMLParts switchml;

    /** With a random uid. */
    public SwitchMLLogisticRegression() {
        this(Identifiable$.MODULE$.randomUID("switchmlLogreg"));
    }

    /** With the given uid (used by copy and load). */
    public SwitchMLLogisticRegression(final String uid) {
        super(uid);
        switchml = new SwitchMLParts(this);
    }

    /**
     * Loads an estimator saved with {@code write().save(path)}: this one's, or a stock {@link LogisticRegression}'s
     * (then as the drop-in, with its uid and params). A Spark Connect server with spark-switchml's ML backend plugin
     * loads every {@code LogisticRegression} through this method.
     */
    public static SwitchMLLogisticRegression load(final String path) {
        return SwitchMLEstimator.loaded(
                LogisticRegression.load(path), SwitchMLLogisticRegression.class, SwitchMLLogisticRegression::new);
    }

    @Override
    public SwitchMLParts switchml() {
        return switchml;
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
        return LinearFit.train(
                new LinearFit.Estimator(
                        this, "SwitchMLLogisticRegression", "LogisticRegression", LOG, switchml.reports()),
                dataset,
                new LinearFit.Columns(
                        DatasetUtils$.MODULE$.checkClassificationLabels(getLabelCol(), Option.empty()),
                        get(weightCol()),
                        getFeaturesCol()),
                () -> super.train(dataset),
                m -> m.summary().totalIterations(),
                fit -> train(dataset, fit));
    }

    /** MLlib's training on the cached batches, every sum through the switch. */
    private LogisticRegressionModel train(final Dataset<?> dataset, final LinearFit fit) {
        final int numFeatures = fit.numFeatures();
        final Option<Object> metaClasses =
                MetadataUtils.getNumClasses(dataset.schema().apply(getLabelCol()));
        final LogisticProblem problem = LogisticProblem.of(
                this,
                metaClasses,
                fit.statistics(
                        metaClasses.isDefined() ? Math.max(1, (Integer) metaClasses.get()) : DEFAULT_LABEL_CAPACITY),
                numFeatures);
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
        final double[] state = fit.run(
                objective,
                optimizer,
                x0,
                getMaxIter(),
                getCheckpointInterval(),
                SwitchMLParams.precision(fit.sparkContext(), this, precision()));
        return fit.trained(LogisticModels.trained(this, dataset, problem, objective, optimizer, state), optimizer);
    }
}

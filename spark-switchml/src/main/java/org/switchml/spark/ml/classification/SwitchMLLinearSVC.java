package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.ClassificationModel;
import org.apache.spark.ml.classification.LinearSVC;
import org.apache.spark.ml.classification.LinearSVCModel;
import org.apache.spark.ml.classification.LinearSVCTrainingSummaryImpl;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.ml.util.MetadataUtils;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ml.linear.FeatureSummary;
import org.switchml.spark.ml.linear.HingeObjective;
import org.switchml.spark.ml.linear.LinearFit;
import org.switchml.spark.ml.linear.OptimizerChoice;
import org.switchml.spark.ml.linear.SwitchMLEstimator;
import org.switchml.spark.ml.linear.SwitchMLParams;
import org.switchml.spark.ml.linear.SwitchMLParts;
import scala.Option;
import scala.Tuple3;

/**
 * MLlib's {@link LinearSVC} trained through the switch: a drop-in subclass with the same params, defaults and
 * validation, returning a genuine {@link LinearSVCModel} with its training summary. As in MLlib, the hinge loss over
 * standardized features (virtually centered with an intercept), L2 regularization ({@code regParam}, on the
 * standardized or, with {@code standardization=false}, the unscaled coefficients), and OWL-QN without an L1 term;
 * every evaluation's loss and gradient are summed through the switch in the fit's barrier stages, one allreduce of
 * {@code [gradient, loss, weight sum]} each, and the feature statistics before them.
 *
 * <p>SwitchML params besides MLlib's: {@link #precision()} and {@link #checkpointInterval()}, as for
 * {@link SwitchMLLogisticRegression}; {@code aggregationDepth} and {@code maxBlockSizeInMB} shape MLlib's
 * treeAggregate and blocks, which the switch replaces, so they matter only where stock MLlib trains.
 *
 * <p>Where the switch cannot be used (a cluster master without the plugin, or dynamic allocation), the fit is
 * stock MLlib's, with one warning per application and the reason in {@link #lastFit()}.
 */
public class SwitchMLLinearSVC extends LinearSVC implements SwitchMLEstimator<SwitchMLLinearSVC> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLLinearSVC.class);

    private final SwitchMLParts switchml;

    /** With a random uid. */
    public SwitchMLLinearSVC() {
        this(Identifiable$.MODULE$.randomUID("switchmlLinearsvc"));
    }

    /** With the given uid (used by copy and load). */
    public SwitchMLLinearSVC(final String uid) {
        super(uid);
        switchml = new SwitchMLParts(this);
    }

    /**
     * Loads an estimator saved with {@code write().save(path)}: this one's, or a stock {@link LinearSVC}'s (then as
     * the drop-in, with its uid and params), as a Spark Connect server with the ML backend plugin does.
     */
    public static SwitchMLLinearSVC load(final String path) {
        return SwitchMLEstimator.loaded(LinearSVC.load(path), SwitchMLLinearSVC.class, SwitchMLLinearSVC::new);
    }

    @Override
    public SwitchMLParts switchml() {
        return switchml;
    }

    /** MLlib's copy (params), keeping the {@link #setListener listener}. */
    @Override
    public SwitchMLLinearSVC copy(final ParamMap extra) {
        return ((SwitchMLLinearSVC) defaultCopy(extra)).setListener(getListener());
    }

    @Override
    public LinearSVCModel train(final Dataset<?> dataset) {
        return LinearFit.train(
                new LinearFit.Estimator(this, "SwitchMLLinearSVC", "LinearSVC", LOG, switchml.reports()),
                dataset,
                new LinearFit.Columns(
                        DatasetUtils$.MODULE$.checkClassificationLabels(getLabelCol(), Option.apply(2)),
                        get(weightCol()),
                        getFeaturesCol()),
                () -> super.train(dataset),
                m -> m.summary().totalIterations(),
                fit -> train(dataset, fit));
    }

    /** MLlib's training on the cached batches, every sum through the switch. */
    private LinearSVCModel train(final Dataset<?> dataset, final LinearFit fit) {
        final int numFeatures = fit.numFeatures();
        final Option<Object> metaClasses =
                MetadataUtils.getNumClasses(dataset.schema().apply(getLabelCol()));
        final FeatureSummary.Stats stats =
                fit.statistics(metaClasses.isDefined() ? Math.max(2, (Integer) metaClasses.get()) : 2);
        final int numClasses = LogisticChecks.numClasses(metaClasses, stats);
        if (numClasses != 2) {
            throw new IllegalArgumentException("requirement failed: LinearSVC only supports binary classification. "
                    + numClasses + " classes detected in " + getLabelCol());
        }
        final HingeObjective objective = HingeObjective.of(
                numFeatures, getFitIntercept(), getRegParam(), getStandardization(), fit.standardization());
        final QuasiNewton optimizer = OptimizerChoice.orthantWise(objective.layout(), getMaxIter(), getTol());
        final double[] state = fit.run(
                objective,
                optimizer,
                objective.initialPoint(),
                getMaxIter(),
                getCheckpointInterval(),
                SwitchMLParams.precision(fit.sparkContext(), this, precision()));
        final double[][] model = objective.toModel(optimizer.solution(state));
        return fit.trained(
                model(dataset, Vectors.dense(model[0]).compressed(), model[1][0], optimizer.objectiveHistory(state)),
                optimizer);
    }

    /** The stock model with this estimator's params and MLlib's training summary attached. */
    private LinearSVCModel model(
            final Dataset<?> dataset,
            final Vector coefficients,
            final double intercept,
            final double[] objectiveHistory) {
        final LinearSVCModel model = copyValues(new LinearSVCModel(uid(), coefficients, intercept), ParamMap.empty());
        final String weightColName = isDefined(weightCol()) ? getWeightCol() : "weightCol";
        final Tuple3<ClassificationModel<Vector, LinearSVCModel>, String, String> found = model.findSummaryModel();
        model.setSummary(Option.apply(new LinearSVCTrainingSummaryImpl(
                found._1().transform(dataset),
                found._2(),
                found._3(),
                getLabelCol(),
                weightColName,
                objectiveHistory)));
        return model;
    }
}

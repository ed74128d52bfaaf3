package org.switchml.spark.ml.regression;

import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.optim.WeightedLeastSquares$;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.ml.regression.LinearRegression$;
import org.apache.spark.ml.regression.LinearRegressionModel;
import org.apache.spark.ml.regression.LinearRegressionTrainingSummary;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.ml.util.Identifiable$;
import org.apache.spark.sql.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ml.linear.FeatureSummary;
import org.switchml.spark.ml.linear.LeastSquaresObjective;
import org.switchml.spark.ml.linear.LinearFit;
import org.switchml.spark.ml.linear.OptimizerChoice;
import org.switchml.spark.ml.linear.SwitchMLEstimator;
import org.switchml.spark.ml.linear.SwitchMLParams;
import org.switchml.spark.ml.linear.SwitchMLParts;
import scala.Option;
import scala.Tuple2;

/**
 * MLlib's {@link LinearRegression} trained through the switch: a drop-in subclass with the same params, defaults
 * and validation, returning a genuine {@link LinearRegressionModel} with its training summary. On MLlib's l-bfgs
 * path (solver {@code l-bfgs}, or {@code auto} with more than {@value #NORMAL_SOLVER_FEATURES} features), the
 * squared error over standardized features and label, L2 regularization through the objective and L1 (elastic
 * net) through OWL-QN, as in MLlib; every evaluation's loss and gradient are summed through the switch in the fit's
 * barrier stages, one allreduce of {@code [gradient, loss, weight sum]} each, and the feature and label statistics
 * before them. The intercept follows from the solution in closed form, as in MLlib.
 *
 * <p>Params that take another path in MLlib train with MLlib's own code, and the fit says so once per application
 * (a warning, and the reason in {@link #lastFit()}): the normal equations ({@code solver=normal}, or {@code auto}
 * with at most {@value #NORMAL_SOLVER_FEATURES} features: one pass over the data, no optimizer loop to put on the
 * switch) and {@code loss=huber} (L-BFGS-B over the coefficients and the Huber scale).
 *
 * <p>SwitchML params besides MLlib's: {@link #precision()} and {@link #checkpointInterval()}, as for
 * {@code SwitchMLLogisticRegression}; {@code aggregationDepth} and {@code maxBlockSizeInMB} shape MLlib's
 * treeAggregate and blocks, which the switch replaces, so they matter only where stock MLlib trains.
 *
 * <p>Where the switch cannot be used (a cluster master without the plugin, or dynamic allocation), the fit is
 * stock MLlib's, with one warning per application and the reason in {@link #lastFit()}.
 */
public class SwitchMLLinearRegression extends LinearRegression implements SwitchMLEstimator<SwitchMLLinearRegression> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLLinearRegression.class);
    /** MLlib's limit of the normal equations, which solver=auto takes up to it. */
    public static final int NORMAL_SOLVER_FEATURES = 4096;

    private final SwitchMLParts switchml;

    /** With a random uid. */
    public SwitchMLLinearRegression() {
        this(Identifiable$.MODULE$.randomUID("switchmlLinReg"));
    }

    /** With the given uid (used by copy and load). */
    public SwitchMLLinearRegression(final String uid) {
        super(uid);
        switchml = new SwitchMLParts(this);
    }

    /**
     * Loads an estimator saved with {@code write().save(path)}: this one's, or a stock {@link LinearRegression}'s
     * (then as the drop-in, with its uid and params), as a Spark Connect server with the ML backend plugin does.
     */
    public static SwitchMLLinearRegression load(final String path) {
        return SwitchMLEstimator.loaded(
                LinearRegression.load(path), SwitchMLLinearRegression.class, SwitchMLLinearRegression::new);
    }

    @Override
    public SwitchMLParts switchml() {
        return switchml;
    }

    /** MLlib's copy (params), keeping the {@link #setListener listener}. */
    @Override
    public SwitchMLLinearRegression copy(final ParamMap extra) {
        return ((SwitchMLLinearRegression) defaultCopy(extra)).setListener(getListener());
    }

    @Override
    public LinearRegressionModel train(final Dataset<?> dataset) {
        final LinearFit.Estimator estimator =
                new LinearFit.Estimator(this, "SwitchMLLinearRegression", "LinearRegression", LOG, switchml.reports());
        final String otherPath = otherPath(dataset);
        if (otherPath != null) {
            return LinearFit.stock(
                    estimator,
                    dataset.sparkSession().sparkContext(),
                    otherPath,
                    "Set solver=l-bfgs (with loss=squaredError) to train through the switch.",
                    () -> super.train(dataset),
                    m -> m.summary().totalIterations());
        }
        return LinearFit.train(
                estimator,
                dataset,
                new LinearFit.Columns(
                        DatasetUtils$.MODULE$.checkRegressionLabels(getLabelCol()), get(weightCol()), getFeaturesCol()),
                () -> super.train(dataset),
                m -> m.summary().totalIterations(),
                fit -> train(dataset, fit));
    }

    /**
     * Why MLlib trains these params without the l-bfgs loop over the squared error (null: it takes that loop), by
     * MLlib's rule: the normal equations for {@code solver=normal}, and for {@code auto} up to
     * {@value #NORMAL_SOLVER_FEATURES} features (the first row's size, or the column's metadata).
     */
    private String otherPath(final Dataset<?> dataset) {
        final LinearRegression$ names = LinearRegression$.MODULE$;
        if (!getLoss().equals(names.SquaredError())) {
            return "loss=" + getLoss() + " takes MLlib's L-BFGS-B over the coefficients and the Huber scale";
        }
        if (getSolver().equals(names.Normal())) {
            return "solver=normal takes MLlib's normal equations (one pass over the data, no optimizer loop)";
        }
        if (getSolver().equals(names.Auto())) {
            final int numFeatures = DatasetUtils$.MODULE$.getNumFeatures(dataset, getFeaturesCol());
            if (numFeatures <= WeightedLeastSquares$.MODULE$.MAX_NUM_FEATURES()) {
                return "solver=auto with " + numFeatures + " features (at most "
                        + WeightedLeastSquares$.MODULE$.MAX_NUM_FEATURES() + ") takes MLlib's normal equations (one "
                        + "pass over the data, no optimizer loop)";
            }
        }
        return null;
    }

    /** MLlib's l-bfgs training on the cached batches, every sum through the switch. */
    private LinearRegressionModel train(final Dataset<?> dataset, final LinearFit fit) {
        final int numFeatures = fit.numFeatures();
        final FeatureSummary.Stats stats = fit.regressionStatistics();
        final double yMean = stats.labelMean();
        final double rawYStd = stats.labelStd();
        if (rawYStd == 0.0) {
            if (getFitIntercept() || yMean == 0.0) {
                if (yMean == 0.0) {
                    LOG.warn("Mean and standard deviation of the label are zero, so the coefficients and the "
                            + "intercept will all be zero; as a result, training is not needed.");
                } else {
                    LOG.warn("The standard deviation of the label is zero, so the coefficients will be zeros and the "
                            + "intercept will be the mean of the label; as a result, training is not needed.");
                }
                return fit.withoutTraining(
                        model(dataset, Vectors.sparse(numFeatures, new int[0], new double[0]), yMean, new double[] {0.0
                        }),
                        "CONSTANT_LABEL");
            }
            if (getRegParam() != 0.0) {
                throw new IllegalArgumentException("requirement failed: The standard deviation of the label is zero. "
                        + "Model cannot be regularized.");
            }
            LOG.warn("The standard deviation of the label is zero. Consider setting fitIntercept=true.");
        }
        // A constant label cannot be scaled: |yMean| leaves it as it is.
        final double yStd = rawYStd > 0 ? rawYStd : Math.abs(yMean);
        final double[] mean = stats.mean();
        final double[] std = stats.std();
        if (!getFitIntercept()) {
            for (int j = 0; j < numFeatures; j++) {
                if (std[j] == 0.0 && mean[j] != 0.0) {
                    LOG.warn("Fitting LinearRegressionModel without intercept on dataset with constant nonzero "
                            + "column, Spark MLlib outputs zero coefficients for constant nonzero columns. This "
                            + "behavior is the same as R glmnet but different from LIBSVM.");
                    break;
                }
            }
        }
        // The features and the label are standardized, so the penalty's weight is too.
        final double effectiveRegParam = getRegParam() / yStd;
        final double effectiveL2 = (1.0 - getElasticNetParam()) * effectiveRegParam;
        final LeastSquaresObjective objective = LeastSquaresObjective.of(
                numFeatures, getFitIntercept(), yMean, yStd, effectiveL2, getStandardization(), fit.standardization());
        final QuasiNewton optimizer = OptimizerChoice.of(
                objective.layout(),
                effectiveRegParam,
                getElasticNetParam(),
                getStandardization(),
                std,
                null,
                getMaxIter(),
                getTol());
        final double[] state = fit.run(
                objective,
                optimizer,
                objective.initialPoint(),
                getMaxIter(),
                getCheckpointInterval(),
                SwitchMLParams.precision(fit.sparkContext(), this, precision()));
        final double[] coefficients = objective.coefficients(optimizer.solution(state));
        double intercept = 0.0;
        if (getFitIntercept()) {
            double dot = 0.0;
            for (int j = 0; j < numFeatures; j++) {
                dot += coefficients[j] * mean[j];
            }
            intercept = yMean - dot;
        }
        return fit.trained(
                model(dataset, Vectors.dense(coefficients).compressed(), intercept, optimizer.objectiveHistory(state)),
                optimizer);
    }

    /** The stock model with this estimator's params and MLlib's training summary attached. */
    private LinearRegressionModel model(
            final Dataset<?> dataset,
            final org.apache.spark.ml.linalg.Vector coefficients,
            final double intercept,
            final double[] objectiveHistory) {
        final LinearRegressionModel model =
                copyValues(new LinearRegressionModel(uid(), coefficients, intercept, 1.0), ParamMap.empty());
        final Tuple2<LinearRegressionModel, String> found = model.findSummaryModelAndPredictionCol();
        model.setSummary(Option.apply(new LinearRegressionTrainingSummary(
                found._1().transform(dataset),
                found._2(),
                getLabelCol(),
                getFeaturesCol(),
                model,
                new double[] {0.0},
                objectiveHistory)));
        return model;
    }
}

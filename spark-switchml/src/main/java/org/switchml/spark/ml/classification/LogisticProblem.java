package org.switchml.spark.ml.classification;

import java.util.Arrays;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.linalg.Matrix;
import org.slf4j.Logger;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ml.linear.CoefficientLayout;
import org.switchml.spark.ml.linear.FeatureSummary;
import org.switchml.spark.ml.linear.LogisticObjective;
import org.switchml.spark.ml.linear.OptimizerChoice;
import org.switchml.spark.ml.linear.Standardization;
import scala.Option;

/**
 * A logistic fit's training problem as MLlib sets it up from the statistics: the classes and the family
 * (checked as MLlib checks them), the objective in the standardized space, the bounds there, the optimizer,
 * and its first point.
 *
 * @param numFeatures   features per row
 * @param numClasses    classes: the label column's, else the largest label plus one
 * @param multinomial   whether the family is multinomial
 * @param stats         the feature statistics and the weight of each label
 */
record LogisticProblem(int numFeatures, int numClasses, boolean multinomial, FeatureSummary.Stats stats) {

    /** The problem of {@code lr}'s fit with these statistics, after MLlib's checks. */
    static LogisticProblem of(
            final LogisticRegression lr,
            final Option<Object> metaClasses,
            final FeatureSummary.Stats statistics,
            final int numFeatures) {
        final int numClasses = LogisticChecks.numClasses(metaClasses, statistics);
        final LogisticProblem problem =
                new LogisticProblem(numFeatures, numClasses, LogisticChecks.multinomial(lr, numClasses), statistics);
        LogisticChecks.checkShapes(lr, problem.sets(), numFeatures, numClasses);
        return problem;
    }

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

    /**
     * MLlib's objective in the standardized space ({@code scaling}); centered when the intercepts are fitted and
     * unbounded.
     */
    LogisticObjective objective(final LogisticRegression lr, final Standardization scaling) {
        final boolean fitWithMean = lr.getFitIntercept()
                && (!lr.isSet(lr.lowerBoundsOnIntercepts())
                        || allEqual(lr.getLowerBoundsOnIntercepts().toArray(), Double.NEGATIVE_INFINITY))
                && (!lr.isSet(lr.upperBoundsOnIntercepts())
                        || allEqual(lr.getUpperBoundsOnIntercepts().toArray(), Double.POSITIVE_INFINITY));
        final double regL2 = (1.0 - lr.getElasticNetParam()) * lr.getRegParam();
        return LogisticObjective.of(
                numFeatures,
                numClasses,
                multinomial,
                lr.getFitIntercept(),
                fitWithMean,
                regL2,
                lr.getStandardization(),
                scaling);
    }

    /** The bounds in the training space (coefficients times std), laid out as the coefficients; null without. */
    double[][] bounds(final LogisticRegression lr, final CoefficientLayout layout) {
        if (!LogisticChecks.bounded(lr)) {
            return null;
        }
        final double[] std = stats.std();
        final int dim = layout.dim();
        final double[] lower = new double[dim];
        final double[] upper = new double[dim];
        Arrays.fill(lower, Double.NEGATIVE_INFINITY);
        Arrays.fill(upper, Double.POSITIVE_INFINITY);
        for (int i = 0; i < dim; i++) {
            final int set = layout.setOf(i);
            final int feature = layout.featureOf(i);
            if (feature < numFeatures) {
                if (lr.isSet(lr.lowerBoundsOnCoefficients())) {
                    lower[i] = lr.getLowerBoundsOnCoefficients().apply(set, feature) * std[feature];
                }
                if (lr.isSet(lr.upperBoundsOnCoefficients())) {
                    upper[i] = lr.getUpperBoundsOnCoefficients().apply(set, feature) * std[feature];
                }
            } else {
                if (lr.isSet(lr.lowerBoundsOnIntercepts())) {
                    lower[i] = lr.getLowerBoundsOnIntercepts().apply(set);
                }
                if (lr.isSet(lr.upperBoundsOnIntercepts())) {
                    upper[i] = lr.getUpperBoundsOnIntercepts().apply(set);
                }
            }
        }
        return new double[][] {lower, upper};
    }

    /** The optimizer MLlib picks for {@code lr}'s params ({@link OptimizerChoice}). */
    QuasiNewton optimizer(final LogisticRegression lr, final CoefficientLayout layout, final double[][] bounds) {
        return OptimizerChoice.of(
                layout,
                lr.getRegParam(),
                lr.getElasticNetParam(),
                lr.getStandardization(),
                stats.std(),
                bounds,
                lr.getMaxIter(),
                lr.getTol());
    }

    /**
     * The optimizer's first point, in the objective's centered space: the initial model's coefficients
     * when their shape fits (else they are ignored with MLlib's warning), the intercepts from the label
     * histogram otherwise, within the bounds.
     */
    double[] initialPoint(
            final LogisticRegression lr,
            final LogisticRegressionModel initialModel,
            final LogisticObjective objective,
            final double[][] bounds,
            final Logger log) {
        final int sets = sets();
        double[] initCoef = null;
        double[] initIntercept = null;
        if (initialModel != null) {
            final Matrix m = initialModel.coefficientMatrix();
            if (m.numRows() == sets
                    && m.numCols() == numFeatures
                    && initialModel.interceptVector().size() == sets
                    && initialModel.getFitIntercept() == lr.getFitIntercept()) {
                initCoef = new double[sets * numFeatures];
                for (int c = 0; c < sets; c++) {
                    for (int j = 0; j < numFeatures; j++) {
                        initCoef[c * numFeatures + j] = m.apply(c, j);
                    }
                }
                initIntercept = initialModel.interceptVector().toArray();
            } else {
                log.warn(
                        "Initial coefficients will be ignored! Its dimensions ({}, {}) did not match the expected "
                                + "size ({}, {})",
                        m.numRows(),
                        m.numCols(),
                        sets,
                        numFeatures);
            }
        }
        final double[] x0 = objective.initialSolution(
                stats.histogram(),
                initCoef,
                initIntercept,
                bounds == null ? null : bounds[0],
                bounds == null ? null : bounds[1]);
        objective.toCentered(x0);
        return x0;
    }

    private static boolean allEqual(final double[] values, final double v) {
        for (final double x : values) {
            if (x != v) {
                return false;
            }
        }
        return true;
    }
}

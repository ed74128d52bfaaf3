package org.switchml.spark.ml.classification;

import java.util.Locale;
import org.apache.spark.SparkException;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.linalg.Matrix;
import org.switchml.spark.ml.linear.FeatureSummary;
import scala.Option;

/**
 * MLlib's checks of a logistic fit, with MLlib's messages: the family against the classes, the classes
 * against the labels, and the params whose shape depends on the classes (bounds, thresholds).
 */
final class LogisticChecks {
    private LogisticChecks() {}

    /** Whether any bound is set. */
    static boolean bounded(final LogisticRegression lr) {
        return lr.isSet(lr.lowerBoundsOnCoefficients())
                || lr.isSet(lr.upperBoundsOnCoefficients())
                || lr.isSet(lr.lowerBoundsOnIntercepts())
                || lr.isSet(lr.upperBoundsOnIntercepts());
    }

    /** Whether the fit is multinomial: the family, or (auto) more than two classes. */
    static boolean multinomial(final LogisticRegression lr, final int numClasses) {
        final String family = lr.getFamily().toLowerCase(Locale.ROOT);
        switch (family) {
            case "binomial":
                require(
                        numClasses == 1 || numClasses == 2,
                        "Binomial family only supports 1 or 2 outcome classes " + "but found " + numClasses + ".");
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
     * The classes: the label column's, which must cover the labels seen, else as many as the histogram's
     * labels; no label may be negative or fractional.
     */
    static int numClasses(final Option<Object> metaClasses, final FeatureSummary.Stats stats) {
        final int labels = stats.histogram().length;
        final int numClasses;
        if (metaClasses.isDefined()) {
            numClasses = (Integer) metaClasses.get();
            require(
                    numClasses >= labels,
                    "Specified number of classes " + numClasses + " was less than the number of unique labels " + labels
                            + ".");
        } else {
            numClasses = labels;
        }
        if (stats.invalidLabels() != 0) {
            throw LogisticChecks.<RuntimeException>unchecked(new SparkException("Classification labels should be in "
                    + "[0 to " + (numClasses - 1) + "]. Found " + stats.invalidLabels() + " invalid labels."));
        }
        return numClasses;
    }

    /** The bounds' shapes and order, and the thresholds' count, for {@code sets} sets of F coefficients. */
    static void checkShapes(final LogisticRegression lr, final int sets, final int numFeatures, final int numClasses) {
        if (bounded(lr)) {
            checkBoundShapes(lr, sets, numFeatures);
        }
        if (lr.isDefined(lr.thresholds()) && lr.getThresholds().length != numClasses) {
            throw new IllegalArgumentException("requirement failed: "
                    + lr.getClass().getSimpleName()
                    + ".train() called with non-matching numClasses and thresholds.length. numClasses=" + numClasses
                    + ", but thresholds has length " + lr.getThresholds().length);
        }
    }

    private static void checkBoundShapes(final LogisticRegression lr, final int sets, final int numFeatures) {
        if (lr.isSet(lr.lowerBoundsOnCoefficients())) {
            final Matrix m = lr.getLowerBoundsOnCoefficients();
            require(
                    m.numRows() == sets && m.numCols() == numFeatures,
                    "The shape of LowerBoundsOnCoefficients must be "
                            + "compatible with (1, number of features) for binomial regression, or (number of classes, number "
                            + "of features) for multinomial regression, but found: (" + m.numRows() + ", " + m.numCols()
                            + ").");
        }
        if (lr.isSet(lr.upperBoundsOnCoefficients())) {
            final Matrix m = lr.getUpperBoundsOnCoefficients();
            require(
                    m.numRows() == sets && m.numCols() == numFeatures,
                    "The shape of upperBoundsOnCoefficients must be "
                            + "compatible with (1, number of features) for binomial regression, or (number of classes, number "
                            + "of features) for multinomial regression, but found: (" + m.numRows() + ", " + m.numCols()
                            + ").");
        }
        if (lr.isSet(lr.lowerBoundsOnIntercepts())) {
            require(
                    lr.getLowerBoundsOnIntercepts().size() == sets,
                    "The size of lowerBoundsOnIntercepts must be equal "
                            + "to 1 for binomial regression, or the number of classes for multinomial regression, but found: "
                            + lr.getLowerBoundsOnIntercepts().size() + ".");
        }
        if (lr.isSet(lr.upperBoundsOnIntercepts())) {
            require(
                    lr.getUpperBoundsOnIntercepts().size() == sets,
                    "The size of upperBoundsOnIntercepts must be equal "
                            + "to 1 for binomial regression, or the number of classes for multinomial regression, but found: "
                            + lr.getUpperBoundsOnIntercepts().size() + ".");
        }
        if (lr.isSet(lr.lowerBoundsOnCoefficients()) && lr.isSet(lr.upperBoundsOnCoefficients())) {
            require(
                    ordered(
                            lr.getLowerBoundsOnCoefficients().toArray(),
                            lr.getUpperBoundsOnCoefficients().toArray()),
                    "LowerBoundsOnCoefficients should always be less than or equal to upperBoundsOnCoefficients, but "
                            + "found: lowerBoundsOnCoefficients = " + lr.getLowerBoundsOnCoefficients()
                            + ", upperBoundsOnCoefficients = " + lr.getUpperBoundsOnCoefficients() + ".");
        }
        if (lr.isSet(lr.lowerBoundsOnIntercepts()) && lr.isSet(lr.upperBoundsOnIntercepts())) {
            require(
                    ordered(
                            lr.getLowerBoundsOnIntercepts().toArray(),
                            lr.getUpperBoundsOnIntercepts().toArray()),
                    "LowerBoundsOnIntercepts should always be less than or equal to upperBoundsOnIntercepts, but "
                            + "found: lowerBoundsOnIntercepts = " + lr.getLowerBoundsOnIntercepts()
                            + ", upperBoundsOnIntercepts = " + lr.getUpperBoundsOnIntercepts() + ".");
        }
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

    /** Throws a checked exception (MLlib's SparkException) without declaring it, as Scala code does. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException unchecked(final Throwable t) throws E {
        throw (E) t;
    }
}

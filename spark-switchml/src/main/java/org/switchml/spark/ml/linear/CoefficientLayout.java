package org.switchml.spark.ml.linear;

import java.io.Serializable;

/**
 * Where each coefficient of a linear model sits in the optimizer's vector, as MLlib trains them: {@code sets}
 * coefficient sets (K classes for multinomial, 1 otherwise) over F features, column-major
 * {@code (feature j, set c) -> j * sets + c}, then the intercepts, one per set, when the model fits them. And the
 * conversions between that vector in the standardized training space (coefficients times std) and a model's
 * coefficients (sets x F, row-major) and intercepts in the original space.
 *
 * @param numFeatures  F
 * @param sets         coefficient sets
 * @param fitIntercept whether the vector ends with one intercept per set
 */
public record CoefficientLayout(int numFeatures, int sets, boolean fitIntercept) implements Serializable {

    /** Length of the vector. */
    public int dim() {
        return sets * (numFeatures + (fitIntercept ? 1 : 0));
    }

    /** Coefficients of the features (the intercepts follow them): those a penalty applies to. */
    public int featureCoefficients() {
        return numFeatures * sets;
    }

    /** The feature of vector element {@code i}, or {@link #numFeatures} for an intercept. */
    public int featureOf(final int i) {
        return i / sets;
    }

    /** The set of vector element {@code i}. */
    public int setOf(final int i) {
        return i % sets;
    }

    /**
     * Writes a model's coefficients ({@code sets x F}, row-major) and its intercepts (those not 0) into
     * {@code x}, in the training space: each feature's coefficients times its std.
     */
    void fromModel(final double[] coefficients, final double[] intercepts, final double[] std, final double[] x) {
        for (int c = 0; c < sets; c++) {
            for (int j = 0; j < numFeatures; j++) {
                x[j * sets + c] = coefficients[c * numFeatures + j] * std[j];
            }
        }
        if (fitIntercept) {
            for (int c = 0; c < sets; c++) {
                if (intercepts[c] != 0.0) {
                    x[numFeatures * sets + c] = intercepts[c];
                }
            }
        }
    }

    /**
     * The model in the original space from {@code x}: {coefficients (sets x F, row-major) divided by std (0
     * where std is 0), intercepts (0 without them)}.
     */
    double[][] toModel(final double[] x, final double[] std) {
        final double[] coefficients = new double[sets * numFeatures];
        final double[] intercepts = new double[sets];
        for (int j = 0; j < numFeatures; j++) {
            for (int c = 0; c < sets; c++) {
                if (std[j] != 0.0) {
                    coefficients[c * numFeatures + j] = x[j * sets + c] / std[j];
                }
            }
        }
        if (fitIntercept) {
            for (int c = 0; c < sets; c++) {
                intercepts[c] = x[numFeatures * sets + c];
            }
        }
        return new double[][] {coefficients, intercepts};
    }

    /**
     * Adds {@code sign * (W . scaledMean)} to each set's intercept: virtual centering moves a solution of the
     * uncentered problem to the centered one with sign 1, and back with -1.
     */
    void shiftIntercepts(final double[] x, final double[] scaledMean, final double sign) {
        final double[] adapt = new double[sets];
        for (int j = 0; j < numFeatures; j++) {
            for (int c = 0; c < sets; c++) {
                adapt[c] += x[j * sets + c] * scaledMean[j];
            }
        }
        for (int c = 0; c < sets; c++) {
            x[numFeatures * sets + c] += sign * adapt[c];
        }
    }

    /** Clips {@code x} into {@code [lower, upper]}, element by element. */
    static void clip(final double[] x, final double[] lower, final double[] upper) {
        for (int i = 0; i < x.length; i++) {
            if (x[i] < lower[i]) {
                x[i] = lower[i];
            } else if (x[i] > upper[i]) {
                x[i] = upper[i];
            }
        }
    }

    /** Subtracts from each feature's coefficients ({@code sets x F}, row-major) their mean over the sets. */
    void centerOverSets(final double[] coefficients) {
        final double[] centers = new double[numFeatures];
        for (int c = 0; c < sets; c++) {
            for (int j = 0; j < numFeatures; j++) {
                centers[j] += coefficients[c * numFeatures + j];
            }
        }
        for (int j = 0; j < numFeatures; j++) {
            centers[j] /= sets;
        }
        for (int c = 0; c < sets; c++) {
            for (int j = 0; j < numFeatures; j++) {
                coefficients[c * numFeatures + j] -= centers[j];
            }
        }
    }

    /** Subtracts from each intercept their mean. */
    void centerIntercepts(final double[] intercepts) {
        double mean = 0.0;
        for (final double b : intercepts) {
            mean += b;
        }
        mean /= sets;
        for (int c = 0; c < sets; c++) {
            intercepts[c] -= mean;
        }
    }
}

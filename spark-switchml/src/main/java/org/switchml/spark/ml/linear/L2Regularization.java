package org.switchml.spark.ml.linear;

import java.io.Serializable;

/**
 * MLlib's {@code L2Regularization} for a linear model's training space: {@code regParam/2 * |w|^2} over the
 * features' coefficients (never the intercepts). Without standardization each coefficient is penalized as if
 * the data were unscaled: {@code regParam/2 * (w_j / std_j)^2}, and not at all where std is 0.
 */
final class L2Regularization implements Serializable {
    private static final long serialVersionUID = 1L;

    private final double regParam;
    private final boolean standardization;
    private final CoefficientLayout layout;
    private final Standardization scaling;

    /**
     * @param regParam        the L2 weight: {@code (1 - elasticNet) * regParam} (0: none)
     * @param standardization MLlib's param: penalize the standardized coefficients, else the unscaled ones
     * @param scaling         the features' std, for the unscaled penalty
     */
    L2Regularization(
            final double regParam,
            final boolean standardization,
            final CoefficientLayout layout,
            final Standardization scaling) {
        this.regParam = regParam;
        this.standardization = standardization;
        this.layout = layout;
        this.scaling = scaling;
    }

    /** Adds the penalty's gradient at {@code coef} to {@code grad}; returns the penalty. */
    double add(final double[] coef, final double[] grad) {
        if (regParam == 0.0) {
            return 0.0;
        }
        final int sets = layout.sets();
        final int applied = layout.featureCoefficients();
        final double[] std = standardization ? null : scaling.std();
        double sum = 0.0;
        for (int j = 0; j < applied; j++) {
            final double c = coef[j];
            if (standardization) {
                sum += c * c;
                grad[j] += c * regParam;
            } else {
                final double s = std[j / sets];
                if (s != 0.0) {
                    final double t = c / (s * s);
                    sum += c * t;
                    grad[j] += regParam * t;
                }
            }
        }
        return 0.5 * sum * regParam;
    }

    /**
     * Writes {@code grad = sum * scale} plus the penalty's gradient at {@code coef} (the mean gradient of a
     * loss and its penalty); returns the penalty. One sweep for a standardized penalty, the common case, with
     * the bits of the two.
     */
    double meanPlusGradient(final double[] sum, final double scale, final double[] coef, final double[] grad) {
        final int dim = layout.dim();
        if (regParam == 0.0 || !standardization) {
            for (int i = 0; i < dim; i++) {
                grad[i] = sum[i] * scale;
            }
            return add(coef, grad);
        }
        final int applied = layout.featureCoefficients();
        double l2 = 0.0;
        for (int j = 0; j < applied; j++) {
            final double c = coef[j];
            l2 += c * c;
            grad[j] = sum[j] * scale + c * regParam;
        }
        for (int i = applied; i < dim; i++) {
            grad[i] = sum[i] * scale;
        }
        return 0.5 * l2 * regParam;
    }
}

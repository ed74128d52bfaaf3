package org.switchml.spark.ml.linear;

/**
 * MLlib 4.0.1's LinearRegression objective for the squared error ({@link LinearObjective}): features and label
 * standardized, {@code 1/(2W) sum_i w_i (x_i . coef - (y_i - yMean) / yStd)^2} over the features scaled by 1/std
 * and, with an intercept, centered. As in MLlib's LeastSquaresBlockAggregator, the intercept is no coefficient (it
 * follows from the solution in closed form), the centering is the margin's constant part {@code yMean / yStd -
 * coef . scaledMean} ({@link #offsets}), and the gradient takes no centering term: its sum over the rows is zero
 * whatever the point, since the means are the data's own. L2 regularization (and L1 through the optimizer) use the
 * effective regParam {@code regParam / yStd}.
 */
public final class LeastSquaresObjective extends LinearObjective {
    private static final long serialVersionUID = 1L;

    private final boolean fitIntercept;
    /** {@code yMean / yStd}: the centered label's constant part. */
    private final double scaledLabelMean;

    private final double labelStd;

    private LeastSquaresObjective(
            final CoefficientLayout layout,
            final Standardization scaling,
            final boolean fitIntercept,
            final double labelMean,
            final double labelStd,
            final double regL2,
            final boolean standardization) {
        super(
                layout,
                scaling,
                false,
                new BinaryDenseKernel(new SquaredLoss(labelStd)),
                new BinarySparseKernel(new SquaredLoss(labelStd)),
                new L2Regularization(regL2, standardization, layout, scaling));
        this.fitIntercept = fitIntercept;
        this.scaledLabelMean = labelMean / labelStd;
        this.labelStd = labelStd;
    }

    /**
     * The objective over features standardized by {@code scaling}.
     *
     * @param labelMean       the label's weighted mean
     * @param labelStd        the label's std as MLlib scales it (its weighted std, or |mean| when that is 0)
     * @param regL2           the effective L2 weight: {@code (1 - elasticNet) * regParam / labelStd}
     * @param standardization MLlib's param: penalize the standardized coefficients, else the unscaled ones
     */
    public static LeastSquaresObjective of(
            final int numFeatures,
            final boolean fitIntercept,
            final double labelMean,
            final double labelStd,
            final double regL2,
            final boolean standardization,
            final Standardization scaling) {
        if (scaling.inverseStd().length != numFeatures) {
            throw new IllegalArgumentException(
                    "the standardization has " + scaling.inverseStd().length + " features, expected " + numFeatures);
        }
        return new LeastSquaresObjective(
                new CoefficientLayout(numFeatures, 1, false),
                scaling,
                fitIntercept,
                labelMean,
                labelStd,
                regL2,
                standardization);
    }

    @Override
    double[] offsets(final double[] coef) {
        if (!fitIntercept) {
            return new double[1];
        }
        final double[] scaledMean = scaling().scaledMean();
        double dot = 0.0;
        for (int j = 0; j < scaledMean.length; j++) {
            dot += coef[j] * scaledMean[j];
        }
        return new double[] {scaledLabelMean - dot};
    }

    /** MLlib's first point: zeros. */
    public double[] initialPoint() {
        return new double[dim()];
    }

    /**
     * The coefficients of a solution in the original space: each times {@code labelStd / std_j} (0 where std is 0).
     * The intercept, {@code yMean - coefficients . mean}, is the estimator's to add.
     */
    public double[] coefficients(final double[] solution) {
        final double[] std = scaling().std();
        final double[] out = new double[std.length];
        for (int j = 0; j < out.length; j++) {
            out[j] = solution[j] * (std[j] != 0.0 ? labelStd / std[j] : 0.0);
        }
        return out;
    }
}

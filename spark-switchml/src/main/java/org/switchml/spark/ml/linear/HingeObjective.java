package org.switchml.spark.ml.linear;

/**
 * MLlib 4.0.1's LinearSVC objective ({@link LinearObjective}): the hinge loss ({@link HingeLoss}) over one
 * coefficient set, virtually centered when the intercept is fitted (its first point and its solution are moved as
 * MLlib moves them), and L2 regularization that skips the intercept. Also MLlib's start and end of the fit: zeros,
 * and the model back in the original space.
 */
public final class HingeObjective extends LinearObjective {
    private static final long serialVersionUID = 1L;

    private HingeObjective(
            final CoefficientLayout layout,
            final Standardization scaling,
            final double regParam,
            final boolean standardization) {
        super(
                layout,
                scaling,
                layout.fitIntercept(),
                new BinaryDenseKernel(new HingeLoss()),
                new BinarySparseKernel(new HingeLoss()),
                new L2Regularization(regParam, standardization, layout, scaling));
    }

    /**
     * The objective over features standardized by {@code scaling}.
     *
     * @param regParam        MLlib's regParam (L2 only)
     * @param standardization MLlib's param: penalize the standardized coefficients, else the unscaled ones
     */
    public static HingeObjective of(
            final int numFeatures,
            final boolean fitIntercept,
            final double regParam,
            final boolean standardization,
            final Standardization scaling) {
        if (scaling.inverseStd().length != numFeatures) {
            throw new IllegalArgumentException(
                    "the standardization has " + scaling.inverseStd().length + " features, expected " + numFeatures);
        }
        return new HingeObjective(
                new CoefficientLayout(numFeatures, 1, fitIntercept), scaling, regParam, standardization);
    }

    /** MLlib's first point: zeros, moved to the centered problem. */
    public double[] initialPoint() {
        final double[] x = new double[dim()];
        toCentered(x);
        return x;
    }

    /**
     * The model of a solution of the centered problem: {coefficients (divided by std, 0 where std is 0), {intercept}
     * (0 without)}.
     */
    public double[][] toModel(final double[] solution) {
        final double[] x = solution.clone();
        fromCentered(x);
        return layout().toModel(x, scaling().std());
    }
}

package org.switchml.spark.ml.linear;

/**
 * The logistic regression objective as MLlib 4.0.1 trains it ({@link LinearObjective}): binomial log loss
 * ({@link LogisticLoss}) with one coefficient set, or the softmax over K sets, and L2 regularization that skips
 * the intercepts. Also MLlib's start and end of a logistic fit: the initial solution from the label
 * distribution, and the model back in the original space.
 */
public final class LogisticObjective extends LinearObjective {
    private static final long serialVersionUID = 1L;

    private final boolean multinomial;

    /**
     * @param numFeatures     F
     * @param numClasses      K (2 for binomial)
     * @param multinomial     softmax over K coefficient sets, else one binomial set
     * @param fitIntercept    whether there are intercepts
     * @param fitWithMean     virtual centering (needs fitIntercept and unbounded intercepts)
     * @param inverseStd      1 / std_j (0 where std is 0)
     * @param scaledMean      mean_j / std_j (0 where std is 0); used only with fitWithMean
     * @param regL2           (1 - elasticNet) * regParam
     * @param standardization MLlib's standardization param (L2 on scaled coefficients)
     * @param featuresStd     std_j, for the L2 term without standardization
     */
    public LogisticObjective(
            final int numFeatures,
            final int numClasses,
            final boolean multinomial,
            final boolean fitIntercept,
            final boolean fitWithMean,
            final double[] inverseStd,
            final double[] scaledMean,
            final double regL2,
            final boolean standardization,
            final double[] featuresStd) {
        this(
                numFeatures,
                numClasses,
                multinomial,
                fitIntercept,
                fitWithMean,
                Standardization.of(inverseStd, scaledMean, featuresStd),
                regL2,
                standardization);
    }

    private LogisticObjective(
            final int numFeatures,
            final int numClasses,
            final boolean multinomial,
            final boolean fitIntercept,
            final boolean fitWithMean,
            final Standardization scaling,
            final double regL2,
            final boolean standardization) {
        this(
                new CoefficientLayout(numFeatures, checkSets(numClasses, multinomial), fitIntercept),
                multinomial,
                fitWithMean,
                scaling,
                regL2,
                standardization);
    }

    private LogisticObjective(
            final CoefficientLayout layout,
            final boolean multinomial,
            final boolean fitWithMean,
            final Standardization scaling,
            final double regL2,
            final boolean standardization) {
        super(
                checked(layout, fitWithMean, scaling),
                scaling,
                fitWithMean,
                multinomial ? new MultinomialDenseKernel() : new BinaryDenseKernel(new LogisticLoss()),
                multinomial ? new MultinomialSparseKernel() : new BinarySparseKernel(new LogisticLoss()),
                new L2Regularization(regL2, standardization, layout, scaling));
        this.multinomial = multinomial;
    }

    private static int checkSets(final int numClasses, final boolean multinomial) {
        if (!multinomial && numClasses > 2) {
            throw new IllegalArgumentException("binomial needs at most 2 classes, got " + numClasses);
        }
        return multinomial ? numClasses : 1;
    }

    private static CoefficientLayout checked(
            final CoefficientLayout layout, final boolean fitWithMean, final Standardization scaling) {
        final int f = layout.numFeatures();
        if (fitWithMean
                && (!layout.fitIntercept() || scaling.scaledMean() == null || scaling.scaledMean().length != f)) {
            throw new IllegalArgumentException("fitting with the mean needs an intercept and " + f + " scaled means");
        }
        if (scaling.inverseStd().length != f) {
            throw new IllegalArgumentException(
                    "inverseStd has length " + scaling.inverseStd().length + ", expected " + f);
        }
        return layout;
    }

    /**
     * The objective over features standardized by {@code scaling} (as {@link LinearFit#standardization()} gives it:
     * its serialized copies carry no per-feature arrays).
     *
     * @param numClasses      K (2 for binomial)
     * @param multinomial     softmax over K coefficient sets, else one binomial set
     * @param fitWithMean     virtual centering (needs fitIntercept and unbounded intercepts)
     * @param regL2           (1 - elasticNet) * regParam
     * @param standardization MLlib's standardization param (L2 on scaled coefficients)
     */
    public static LogisticObjective of(
            final int numFeatures,
            final int numClasses,
            final boolean multinomial,
            final boolean fitIntercept,
            final boolean fitWithMean,
            final double regL2,
            final boolean standardization,
            final Standardization scaling) {
        return new LogisticObjective(
                numFeatures, numClasses, multinomial, fitIntercept, fitWithMean, scaling, regL2, standardization);
    }

    // ------------------------------------------------------------------ start and end of a fit

    /**
     * MLlib's initial solution: zeros, intercepts from the label distribution (binomial
     * {@code log(h1/h0)}, multinomial centered {@code log1p(h_k)}), or the given model's coefficients
     * scaled into the training space; clipped into the bounds. Not yet shifted for virtual centering
     * (see {@link #toCentered}).
     *
     * @param histogram     label weight sums
     * @param initialCoef   the initial model's coefficients (K x F row-major) or null
     * @param initialInt    the initial model's intercepts or null
     * @param lower         lower bounds in the training space or null
     * @param upper         upper bounds in the training space or null
     */
    public double[] initialSolution(
            final double[] histogram,
            final double[] initialCoef,
            final double[] initialInt,
            final double[] lower,
            final double[] upper) {
        final CoefficientLayout layout = layout();
        final int interceptAt = layout.featureCoefficients();
        final double[] x = new double[dim()];
        if (initialCoef != null) {
            layout.fromModel(initialCoef, initialInt, scaling().std(), x);
        } else if (layout.fitIntercept() && multinomial) {
            final double[] raw = new double[histogram.length];
            double mean = 0.0;
            for (int c = 0; c < raw.length; c++) {
                raw[c] = Math.log1p(histogram[c]);
                mean += raw[c];
            }
            mean /= raw.length;
            for (int c = 0; c < raw.length; c++) {
                x[interceptAt + c] = raw[c] - mean;
            }
        } else if (layout.fitIntercept()) {
            final double h0 = histogram.length > 0 ? histogram[0] : 0.0;
            final double h1 = histogram.length > 1 ? histogram[1] : 0.0;
            x[interceptAt] = Math.log(h1 / h0);
        }
        if (lower != null) {
            CoefficientLayout.clip(x, lower, upper);
        }
        return x;
    }

    /**
     * The model in the original space: coefficients (K x F, row-major) divided by std (0 where std is
     * 0) and the intercepts; multinomial coefficients are centered over the classes when unregularized
     * and unbounded, and multinomial intercepts when unbounded, as MLlib does.
     *
     * @return {coefficients (sets x F row-major), intercepts (sets)}
     */
    public double[][] toModel(final double[] x, final boolean unregularized, final boolean bounded) {
        final CoefficientLayout layout = layout();
        final double[][] model = layout.toModel(x, scaling().std());
        if (unregularized && multinomial && !bounded) {
            layout.centerOverSets(model[0]);
        }
        if (layout.fitIntercept() && multinomial && !bounded) {
            layout.centerIntercepts(model[1]);
        }
        return model;
    }

    /** log(1 + exp(x)) without overflow. */
    static double log1pExp(final double x) {
        return LogisticLoss.log1pExp(x);
    }

    /** In-place softmax, stable against overflow; a +infinity margin takes all the mass. */
    static void softmax(final double[] m) {
        SoftmaxLoss.softmax(m, 0, m.length);
    }
}

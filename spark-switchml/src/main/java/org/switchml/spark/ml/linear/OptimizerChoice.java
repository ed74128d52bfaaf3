package org.switchml.spark.ml.linear;

import org.switchml.optim.Lbfgs;
import org.switchml.optim.Lbfgsb;
import org.switchml.optim.Owlqn;
import org.switchml.optim.QuasiNewton;

/**
 * The optimizer MLlib picks for a linear model's fit, with its 10 curvature pairs: OWL-QN when an L1 term is
 * in the objective (elastic net), else L-BFGS-B with bounds, else L-BFGS.
 */
public final class OptimizerChoice {
    private static final int PAIRS = 10;

    private OptimizerChoice() {}

    /**
     * @param regParam        MLlib's regParam
     * @param elasticNet      MLlib's elasticNetParam: the L1 share of regParam
     * @param standardization whether the penalty applies to the standardized coefficients, else to the unscaled
     *                        ones (the L1 weight of a feature's coefficients is then divided by its std)
     * @param std             the features' std
     * @param bounds          {lower, upper} in the training space, or null
     * @param maxIter         MLlib's maxIter
     * @param tol             MLlib's tol
     */
    public static QuasiNewton of(
            final CoefficientLayout layout,
            final double regParam,
            final double elasticNet,
            final boolean standardization,
            final double[] std,
            final double[][] bounds,
            final int maxIter,
            final double tol) {
        if (elasticNet == 0.0 || regParam == 0.0) {
            return bounds != null
                    ? new Lbfgsb(bounds[0], bounds[1], PAIRS, maxIter, tol)
                    : new Lbfgs(layout.dim(), PAIRS, maxIter, tol);
        }
        final double l1 = elasticNet * regParam;
        final int penalized = layout.featureCoefficients();
        final int sets = layout.sets();
        final double[] perFeature = standardization ? null : std.clone();
        return new Owlqn(layout.dim(), PAIRS, maxIter, tol, i -> {
            if (i >= penalized) {
                return 0.0; // the intercepts are not penalized
            }
            if (perFeature == null) {
                return l1;
            }
            final double s = perFeature[i / sets];
            return s != 0.0 ? l1 / s : 0.0; // as if the data were not standardized
        });
    }

    /**
     * OWL-QN with no L1 term, as MLlib's LinearSVC trains: its steps stay in the orthant of the current point, and
     * its line search backtracks.
     */
    public static QuasiNewton orthantWise(final CoefficientLayout layout, final int maxIter, final double tol) {
        return new Owlqn(layout.dim(), PAIRS, maxIter, tol, i -> 0.0);
    }
}

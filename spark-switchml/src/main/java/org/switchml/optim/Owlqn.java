package org.switchml.optim;

import java.io.Serializable;

/**
 * OWL-QN (Andrew and Gao, 2007) for {@code f(x) + sum_i l1_i |x_i|}, as breeze 2.1.0's
 * {@code OWLQN(maxIter, m, l1, tol)} runs it for MLlib's elastic net: the L-BFGS direction over the
 * pseudo-gradient with components that disagree in sign with it zeroed, steps projected onto the orthant
 * of x (or of minus the pseudo-gradient where x is 0), curvature pairs from the smooth part only, and
 * breeze's backtracking line search on the adjusted value (shrink 0.1 in the first iteration and 0.5
 * later, grow 2.1, Armijo 1e-4, strong Wolfe 0.9, first step {@code 0.5/|grad|} then 1, at most 20
 * trials). As in breeze, the search's first trial is judged against the unregularized value at x, and
 * after 20 trials the previous step is taken (and evaluated once more).
 */
public final class Owlqn extends QuasiNewton {
    private static final long serialVersionUID = 1L;

    /** The L1 weight of each coordinate (0: not penalized). */
    @FunctionalInterface
    public interface L1 extends Serializable {
        /** Weight of coordinate {@code i}; must be >= 0. */
        double at(int i);
    }

    private final L1 l1;
    private final Backtracking search = new Backtracking();

    /**
     * @param n       coefficients
     * @param m       curvature pairs kept (MLlib: 10)
     * @param maxIter iterations
     * @param tol     convergence tolerance (MLlib's tol)
     * @param l1      the L1 weight per coordinate
     */
    public Owlqn(final int n, final int m, final int maxIter, final double tol, final L1 l1) {
        super(2, n, m, maxIter, tol, 4, 0);
        this.l1 = l1;
    }

    /**
     * Backtracking: up to {@value Backtracking#MAX_TRIALS} trials, and when the last one is not accepted the
     * previous step is evaluated once more.
     */
    @Override
    public int maxEvaluationsPerSearch() {
        return Backtracking.MAX_TRIALS + 1;
    }

    @Override
    OptimizerState.Vector adjustedGradient(final OptimizerState st) {
        return st.pseudoGradient();
    }

    @Override
    void adjustAtX(final OptimizerState st) {
        st.adjustedValue(adjust(st.x(), st.grad(), st.value(), st.pseudoGradient()));
    }

    /** Adds the L1 term to the value, writes the pseudo-gradient into {@code out}; returns the adjusted value. */
    private double adjust(
            final OptimizerState.Vector x,
            final OptimizerState.Vector g,
            final double value,
            final OptimizerState.Vector out) {
        double adj = value;
        for (int i = 0; i < n; i++) {
            final double w = l1.at(i);
            if (!(w >= 0.0)) {
                throw new IllegalArgumentException("L1 weight of coordinate " + i + " is " + w + "; must be >= 0");
            }
            final double gi = g.get(i);
            final double xi = x.get(i);
            if (w == 0.0) {
                out.set(i, gi);
                continue;
            }
            adj += Math.abs(w * xi);
            out.set(i, xi == 0.0 ? pseudo(gi, w) : gi + Math.signum(xi) * w);
        }
        return adj;
    }

    /** The pseudo-gradient at x_i = 0: the one-sided derivative that descends, or 0. */
    private static double pseudo(final double g, final double w) {
        final double plus = g + w;
        final double minus = g - w;
        if (minus > 0) {
            return minus;
        }
        return plus < 0 ? plus : 0.0;
    }

    @Override
    void phi(
            final OptimizerState st, final double alpha, final double value, final double[] grad, final double[] out2) {
        final double[] x = new double[n];
        takeStep(st, alpha, x);
        final double[] pg = new double[n];
        out2[0] = adjust(
                new OptimizerState.Vector(x, 0, n),
                new OptimizerState.Vector(grad, 0, n),
                value,
                new OptimizerState.Vector(pg, 0, n));
        out2[1] = st.dir().dot(pg);
    }

    @Override
    void direction(final OptimizerState st) {
        final OptimizerState.Vector d = st.dir();
        final OptimizerState.Vector pg = st.pseudoGradient();
        new CurvatureHistory(st).twoLoop(pg, d);
        for (int i = 0; i < n; i++) {
            if (!(d.get(i) * pg.get(i) < 0)) {
                d.set(i, 0.0); // keep only components that descend along the pseudo-gradient
            }
        }
    }

    @Override
    void beginSearch(final OptimizerState st) {
        final boolean first = st.iterations() < 1;
        search.begin(
                st,
                first,
                st.adjustedValue(),
                st.pseudoGradient().dot(st.dir()),
                st.value(),
                first ? 0.5 / st.grad().norm() : 1.0);
    }

    @Override
    LineSearch searchStep(final OptimizerState st, final double fv, final double dd) {
        return search.step(st, fv, dd);
    }

    @Override
    void takeStep(final OptimizerState st, final double alpha, final double[] out) {
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector d = st.dir();
        final OptimizerState.Vector pg = st.pseudoGradient();
        for (int i = 0; i < n; i++) {
            final double xi = x.get(i);
            final double v = xi + d.get(i) * alpha;
            final double orthant = xi != 0 ? Math.signum(xi) : Math.signum(-pg.get(i));
            out[i] = Math.signum(v) == orthant ? v : v * 0.0;
        }
    }

    @Override
    void updateHistory(final OptimizerState st, final double[] newX, final double[] newGrad) {
        new CurvatureHistory(st).pushDifference(newX, newGrad);
    }
}

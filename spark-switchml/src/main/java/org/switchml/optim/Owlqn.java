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
    private static final int BACKTRACK_STEPS = 20;
    private static final double ARMIJO = 1e-4;
    private static final double WOLFE = 0.9;
    private static final double GROW = 2.1;
    private static final double MIN_STEP = 1e-10;
    private static final double MAX_STEP = 1e10;

    /** The L1 weight of each coordinate (0: not penalized). */
    @FunctionalInterface
    public interface L1 extends Serializable {
        /** Weight of coordinate {@code i}; must be >= 0. */
        double at(int i);
    }

    private final L1 l1;

    /**
     * @param n       coefficients
     * @param m       curvature pairs kept (MLlib: 10)
     * @param maxIter iterations
     * @param tol     convergence tolerance (MLlib's tol)
     * @param l1      the L1 weight per coordinate
     */
    public Owlqn(final int n, final int m, final int maxIter, final double tol, final L1 l1) {
        super(2, n, m, maxIter, tol, 0);
        this.l1 = l1;
    }

    /**
     * Backtracking: up to {@code BACKTRACK_STEPS} trials, and when the last one is not accepted the previous
     * step is evaluated once more.
     */
    @Override
    public int maxEvaluationsPerSearch() {
        return BACKTRACK_STEPS + 1;
    }

    @Override
    int vectors() {
        return 4;
    }

    @Override
    int adjGradOffset() {
        return header + 3 * n;
    }

    @Override
    void adjustAtX(final double[] s) {
        s[ADJ_VALUE] = adjust(s, xOff(), s, gradOff(), s[VALUE], s, adjGradOffset());
    }

    /** Adds the L1 term to the value, writes the pseudo-gradient at {@code out}; returns the adjusted value. */
    private double adjust(final double[] x, final int xo, final double[] g, final int go, final double value,
                          final double[] out, final int oo) {
        double adj = value;
        for (int i = 0; i < n; i++) {
            final double w = l1.at(i);
            if (!(w >= 0.0)) {
                throw new IllegalArgumentException("L1 weight of coordinate " + i + " is " + w + "; must be >= 0");
            }
            final double gi = g[go + i];
            final double xi = x[xo + i];
            if (w == 0.0) {
                out[oo + i] = gi;
                continue;
            }
            adj += Math.abs(w * xi);
            out[oo + i] = xi == 0.0 ? pseudo(gi, w) : gi + Math.signum(xi) * w;
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
    void phi(final double[] s, final double alpha, final double value, final double[] grad, final double[] out2) {
        final double[] x = new double[n];
        takeStep(s, alpha, x);
        final double[] pg = new double[n];
        out2[0] = adjust(x, 0, grad, 0, value, pg, 0);
        out2[1] = dot(pg, 0, s, dirOff(), n);
    }

    @Override
    void direction(final double[] s) {
        final int d = dirOff();
        final int pg = adjGradOffset();
        twoLoop(s, pg, d);
        for (int i = 0; i < n; i++) {
            if (!(s[d + i] * s[pg + i] < 0)) {
                s[d + i] = 0.0; // keep only components that descend along the pseudo-gradient
            }
        }
    }

    @Override
    void beginSearch(final double[] s) {
        final boolean first = s[ITER] < 1;
        s[LS_F0] = s[ADJ_VALUE];
        s[LS_DD0] = dot(s, adjGradOffset(), s, dirOff(), n);
        s[BT_INIT_F] = s[VALUE];
        s[BT_SHRINK] = first ? 0.1 : 0.5;
        s[LS_STAGE] = 0;
        s[LS_I] = 0;
        s[ALPHA] = first ? 0.5 / norm(s, gradOff(), n) : 1.0;
    }

    @Override
    int searchStep(final double[] s, final double fv, final double dd) {
        final double alpha = s[ALPHA];
        final double fval;
        if (s[LS_STAGE] == 0) {
            // breeze seeds its first trial with the unregularized value at x, not the value just computed
            fval = s[BT_INIT_F];
            s[LS_STAGE] = 1;
            s[LS_I] = 0;
        } else {
            fval = fv;
            s[LS_I] = s[LS_I] + 1;
        }
        final double f0 = s[LS_F0];
        final double df0 = s[LS_DD0];
        final double shrink = s[BT_SHRINK];
        final double factor;
        if (fval > f0 + alpha * df0 * ARMIJO) {
            factor = shrink;
        } else if (dd < WOLFE * df0) {
            factor = GROW;
        } else if (dd > -WOLFE * df0) {
            factor = shrink;
        } else {
            return ACCEPT_LAST;
        }
        final int iter = (int) s[LS_I];
        final double next = alpha * factor;
        if (iter >= BACKTRACK_STEPS) {
            throw new SearchFailure("line search failed");
        }
        if (next < MIN_STEP) {
            throw new SearchFailure("step size underflow");
        }
        if (next > MAX_STEP) {
            throw new SearchFailure("step size overflow");
        }
        if (iter + 1 >= BACKTRACK_STEPS) {
            return ACCEPT_OTHER; // breeze stops before its 20th trial and keeps the current step
        }
        s[ALPHA] = next;
        return CONTINUE;
    }

    @Override
    void takeStep(final double[] s, final double alpha, final double[] out) {
        final int x = xOff();
        final int d = dirOff();
        final int pg = adjGradOffset();
        for (int i = 0; i < n; i++) {
            final double xi = s[x + i];
            final double v = xi + s[d + i] * alpha;
            final double orthant = xi != 0 ? Math.signum(xi) : Math.signum(-s[pg + i]);
            out[i] = Math.signum(v) == orthant ? v : v * 0.0;
        }
    }

    @Override
    double[] updateHistory(final double[] s, final double[] newX, final double[] newGrad) {
        return pushDifferencePair(s, newX, newGrad);
    }
}

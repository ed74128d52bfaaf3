package org.switchml.spark.ml.optim;

/**
 * L-BFGS as breeze 2.1.0's {@code LBFGS(maxIter, m, tol)} runs it for MLlib: the two-loop direction over
 * the last {@code m} pairs (every pair is kept; a pair with negative curvature fails the iteration),
 * a strong Wolfe line search (c1 = 1e-4, c2 = 0.9, at most 10 trials and 10 zoom steps) starting at
 * {@code 1/|dir|} in the first iteration and at 1 afterwards, and a step-size underflow failure when
 * {@code alpha * |grad| < 1e-10}. See {@link QuasiNewton} for the machine and the state.
 */
public final class Lbfgs extends QuasiNewton {
    private static final long serialVersionUID = 1L;
    private static final int SEARCH_STEPS = 10;

    /**
     * @param n       coefficients
     * @param m       curvature pairs kept (MLlib: 10)
     * @param maxIter iterations
     * @param tol     convergence tolerance (MLlib's tol)
     */
    public Lbfgs(final int n, final int m, final int maxIter, final double tol) {
        super(1, n, m, maxIter, tol, 0);
    }

    @Override
    int vectors() {
        return 3;
    }

    @Override
    void adjustAtX(final double[] s) {
        s[ADJ_VALUE] = s[VALUE];
    }

    @Override
    void phi(final double[] s, final double alpha, final double value, final double[] grad, final double[] out2) {
        out2[0] = value;
        out2[1] = dot(grad, 0, s, dirOff(), n);
    }

    @Override
    void direction(final double[] s) {
        twoLoop(s, gradOff(), dirOff());
    }

    @Override
    void beginSearch(final double[] s) {
        final double init = s[ITER] == 0 ? 1.0 / norm(s, dirOff(), n) : 1.0;
        beginStrongWolfe(s, init, Double.POSITIVE_INFINITY, s[VALUE], dot(s, gradOff(), s, dirOff(), n));
    }

    @Override
    int searchStep(final double[] s, final double fv, final double dd) {
        return strongWolfeStep(s, fv, dd, SEARCH_STEPS, SEARCH_STEPS);
    }

    @Override
    void afterSearch(final double[] s, final double alpha) {
        if (alpha * norm(s, gradOff(), n) < 1e-10) {
            throw new SearchFailure("step size underflow");
        }
    }

    @Override
    void takeStep(final double[] s, final double alpha, final double[] out) {
        final int x = xOff();
        final int d = dirOff();
        for (int i = 0; i < n; i++) {
            out[i] = s[d + i] * alpha + s[x + i];
        }
    }

    @Override
    double[] updateHistory(final double[] s, final double[] newX, final double[] newGrad) {
        return pushDifferencePair(s, newX, newGrad);
    }
}

package org.switchml.optim;

/**
 * The last m curvature pairs {@code (s, y)} of a state, with their dot products {@code s.y} and {@code y.y}
 * computed once when a pair is stored, and breeze's two-loop recursion over them. The pairs are a ring: a new
 * one overwrites the oldest once m are stored, so nothing moves (at 10^7 coefficients a pair is 160 MB).
 * Pairs are numbered by age, 0 the oldest.
 */
final class CurvatureHistory {
    private final OptimizerState state;
    private final int m;
    private final int n;

    CurvatureHistory(final OptimizerState state) {
        this.state = state;
        this.m = state.layout().m();
        this.n = state.layout().n();
    }

    /** Pairs stored. */
    int size() {
        return state.pairs();
    }

    /** Ring slot of pair {@code j}. */
    int slot(final int j) {
        return (state.ringStart() + j) % m;
    }

    /** s of pair {@code j}. */
    OptimizerState.Vector s(final int j) {
        return state.pairS(slot(j));
    }

    /** y of pair {@code j}. */
    OptimizerState.Vector y(final int j) {
        return state.pairY(slot(j));
    }

    /** {@code s.y} of pair {@code j}. */
    double sy(final int j) {
        return state.pairSy(slot(j));
    }

    /** {@code y.y} of pair {@code j}. */
    double yy(final int j) {
        return state.pairYy(slot(j));
    }

    /**
     * Makes room for a newest pair and returns its ring slot: over the oldest when m are stored (the ring
     * turns), else the next free one. The first pair grows the state to room for all m at once (one
     * allocation, rather than one copy of a growing state per pair).
     */
    int claimNewest() {
        final int k = state.pairs();
        if (k == m) {
            state.ringStart((state.ringStart() + 1) % m);
        } else {
            if (!state.hasMaxLength()) {
                state.growToMaxLength();
            }
            state.pairs(k + 1); // the ring starts at 0 and has not wrapped
        }
        return slot(state.pairs() - 1);
    }

    /** Stores {@code (sv, yv)} as the newest pair. */
    void push(final double[] sv, final double[] yv) {
        final int slot = claimNewest();
        state.pairS(slot).copyFrom(sv);
        state.pairY(slot).copyFrom(yv);
        double sy = 0.0;
        double yy = 0.0;
        for (int i = 0; i < n; i++) {
            sy += sv[i] * yv[i];
        }
        for (int i = 0; i < n; i++) {
            yy += yv[i] * yv[i];
        }
        state.pairDots(slot, sy, yy);
    }

    /**
     * Stores {@code (newX - x, newGrad - grad)} with x and grad of the state as the newest pair, computed in
     * place in the pair's slot, with its two dot products in the same sweep: no temporary vectors and one pass
     * over n instead of four (the same bits).
     */
    void pushDifference(final double[] newX, final double[] newGrad) {
        final int slot = claimNewest();
        final double[] dots = new double[2];
        state.pairS(slot).differences(newX, state.x(), state.pairY(slot), newGrad, state.grad(), dots);
        state.pairDots(slot, dots[0], dots[1]);
    }

    /** Drops every pair (breeze's initialHistory), and the state's room for them. */
    void clear() {
        state.pairs(0).theta(1.0).ringStart(0);
        state.dropPairs();
    }

    /**
     * breeze's {@code LBFGS.ApproximateInverseHessian} times {@code g} (the two-loop recursion, newest pair
     * first), negated into {@code out}: the L-BFGS direction.
     */
    void twoLoop(final OptimizerState.Vector g, final OptimizerState.Vector out) {
        final int k = size();
        double diag = 1.0;
        if (k > 0) {
            final double sy = sy(k - 1);
            if (sy < 0 || Double.isNaN(sy)) {
                throw new SearchFailure("NaN history");
            }
            diag = sy / yy(k - 1);
        }
        if (k == 0) {
            out.negate(g); // (g * 1.0) * -1.0, the same bits
            return;
        }
        // The passes are fused (each axpy computes the next dot product on the fly, the copy, the scaling
        // by diag and the negation ride along), so each vector element sees the same operations in the
        // same order as in the unfused recursion (bit-identical), with about half the sweeps over n.
        final double[] as = new double[k];
        final double[] rho = new double[k];
        for (int i = 0; i < k; i++) {
            rho[i] = sy(k - 1 - i);
        }
        // first loop, newest pair first: q = g; a_i = s_i . q / rho_i; q -= a_i y_i
        double dot = out.copyDot(g, s(k - 1));
        for (int i = 0; i < k; i++) {
            as[i] = dot / rho[i];
            if (Double.isNaN(as[i])) {
                throw new SearchFailure("NaN history");
            }
            final OptimizerState.Vector yi = y(k - 1 - i);
            dot = i + 1 < k
                    ? out.axpyDot(-as[i], yi, s(k - 2 - i))
                    // last pair: then q *= diag, and the second loop's first dot (y of the oldest pair)
                    : out.axpyScaleDot(-as[i], yi, diag, yi);
        }
        // second loop, oldest pair first: beta = y_i . q / rho_i; q += (a_i - beta) s_i; finally q = -q
        for (int i = k - 1; i >= 0; i--) {
            final double c = as[i] - dot / rho[i];
            if (i > 0) {
                dot = out.axpyDot(c, s(k - 1 - i), y(k - i));
            } else {
                out.axpyScale(c, s(k - 1 - i), -1.0);
            }
        }
    }
}

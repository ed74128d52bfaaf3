package org.switchml.optim;

import java.io.Serializable;

/**
 * breeze's {@code StrongWolfeLineSearch.minimizeWithBound} as a step machine over a state's search registers
 * (Nocedal and Wright, algorithms 3.5 and 3.6, c1 = 1e-4, c2 = 0.9, with breeze's bound, its halving of a
 * step whose value is not finite, and its cubic interpolation): at most {@code maxTrials} trials while
 * bracketing, then at most {@code maxZoom} while zooming.
 */
final class StrongWolfe implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final double C1 = 1e-4;
    private static final double C2 = 0.9;

    private final int maxTrials;
    private final int maxZoom;

    StrongWolfe(final int maxTrials, final int maxZoom) {
        this.maxTrials = maxTrials;
        this.maxZoom = maxZoom;
    }

    /** The most evaluations one search can ask for. */
    int maxEvaluations() {
        return maxTrials + maxZoom;
    }

    /**
     * Starts a search from the value {@code f0} and slope {@code dd0} at step 0, with the first trial at
     * {@code init} and no step beyond {@code bound}.
     */
    void begin(final OptimizerState st, final double init, final double bound, final double f0, final double dd0) {
        st.low(0.0, dd0, f0).searchValue(f0).searchSlope(dd0);
        if (dd0 > 0) {
            throw new SearchFailure("line search invoked with non-descent direction: " + dd0);
        }
        st.searchStage(0).searchTrial(0).stepBound(bound).step(init);
    }

    /** One step with the value {@code fv} and slope {@code dd} at the current trial. */
    LineSearch step(final OptimizerState st, final double fv, final double dd) {
        final double t = st.step();
        final double f0 = st.searchValue();
        final double dd0 = st.searchSlope();
        if (st.searchStage() == 0) {
            final int i = st.searchTrial();
            if (Double.isInfinite(fv) || Double.isNaN(fv)) {
                return nextTrial(st, t / 2.0, i + 1); // too long a step: halve it
            }
            if (fv > f0 + C1 * t * dd0 || (fv >= st.lowValue() && i > 0)) {
                return beginZoom(st, st.lowStep(), st.lowSlope(), st.lowValue(), t, dd, fv);
            }
            if (Math.abs(dd) <= C2 * Math.abs(dd0)) {
                return LineSearch.ACCEPT_LAST;
            }
            if (dd >= 0) {
                return beginZoom(st, t, dd, fv, st.lowStep(), st.lowSlope(), st.lowValue());
            }
            st.low(t, dd, fv);
            final double bound = st.stepBound();
            if (t == bound) {
                return LineSearch.ACCEPT_LAST;
            }
            return nextTrial(st, Math.min(t * 1.5, bound), i + 1);
        }
        if (fv > f0 + C1 * t * dd0 || fv >= st.lowValue()) {
            st.high(t, dd, fv);
        } else {
            if (Math.abs(dd) <= C2 * Math.abs(dd0)) {
                return LineSearch.ACCEPT_LAST;
            }
            if (dd * (st.highStep() - st.lowStep()) >= 0) {
                st.high(st.lowStep(), st.lowSlope(), st.lowValue());
            }
            st.low(t, dd, fv);
        }
        st.searchTrial(st.searchTrial() + 1);
        return zoomTrial(st);
    }

    private LineSearch nextTrial(final OptimizerState st, final double t, final int i) {
        if (i >= maxTrials) {
            throw new SearchFailure("line search failed");
        }
        st.searchTrial(i).step(t);
        return LineSearch.CONTINUE;
    }

    private LineSearch beginZoom(
            final OptimizerState st,
            final double lt,
            final double ld,
            final double lf,
            final double ht,
            final double hd,
            final double hf) {
        st.searchStage(1).searchTrial(0).low(lt, ld, lf).high(ht, hd, hf);
        return zoomTrial(st);
    }

    private LineSearch zoomTrial(final OptimizerState st) {
        if (st.searchTrial() >= maxZoom) {
            throw new SearchFailure("line search zoom failed");
        }
        final double t = st.lowStep() > st.highStep()
                ? cubic(st.highStep(), st.highSlope(), st.highValue(), st.lowStep(), st.lowSlope(), st.lowValue())
                : cubic(st.lowStep(), st.lowSlope(), st.lowValue(), st.highStep(), st.highSlope(), st.highValue());
        if (Double.isNaN(t)) {
            throw new SearchFailure(
                    "line search zoom failed"); // breeze evaluates at NaN first; the outcome is the same
        }
        st.step(t);
        return LineSearch.CONTINUE;
    }

    /**
     * The minimizer of the cubic through (lt, lf, ld) and (rt, rf, rd) (lt < rt), kept within the middle
     * 80% of the interval (Nocedal and Wright, eq. 3.59, as breeze's CubicLineSearch.interp).
     */
    static double cubic(
            final double lt, final double ld, final double lf, final double rt, final double rd, final double rf) {
        final double d1 = ld + rd - 3 * (lf - rf) / (lt - rt);
        final double d2 = Math.sqrt(d1 * d1 - ld * rd);
        final double width = rt - lt;
        final double t = rt - width * (rd + d2 - d1) / (rd - ld + 2 * d2);
        final double lo = lt + 0.1 * (rt - lt);
        final double hi = lt + 0.9 * (rt - lt);
        if (t < lo) {
            return lo;
        }
        if (t > hi) {
            return hi;
        }
        return t;
    }
}

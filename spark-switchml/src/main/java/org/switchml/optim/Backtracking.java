package org.switchml.optim;

import java.io.Serializable;

/**
 * breeze's {@code BacktrackingLineSearch} as OWL-QN runs it, as a step machine over a state's search registers:
 * a rejected step shrinks by the state's shrink factor (0.1 in the first iteration, 0.5 later), a step whose
 * slope is still steep grows by 2.1, with the Armijo condition at 1e-4 and the strong Wolfe one at 0.9, at most
 * {@value #MAX_TRIALS} trials. As in breeze, the first trial is judged against the unregularized value at x,
 * and after the last trial the previous step is taken (and evaluated once more).
 */
final class Backtracking implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int MAX_TRIALS = 20;
    private static final double ARMIJO = 1e-4;
    private static final double WOLFE = 0.9;
    private static final double GROW = 2.1;
    private static final double MIN_STEP = 1e-10;
    private static final double MAX_STEP = 1e10;

    /**
     * Starts a search from the adjusted value {@code f0} and slope {@code df0} at step 0.
     *
     * @param first      whether this is the first iteration (shrink 0.1, else 0.5)
     * @param startValue the unregularized value at x, which the first trial is judged by
     * @param init       the first trial step
     */
    void begin(
            final OptimizerState st,
            final boolean first,
            final double f0,
            final double df0,
            final double startValue,
            final double init) {
        st.searchValue(f0)
                .searchSlope(df0)
                .startValue(startValue)
                .shrink(first ? 0.1 : 0.5)
                .searchStage(0)
                .searchTrial(0)
                .step(init);
    }

    /** One step with the value {@code fv} and slope {@code dd} at the current trial. */
    LineSearch step(final OptimizerState st, final double fv, final double dd) {
        final double alpha = st.step();
        final double fval;
        if (st.searchStage() == 0) {
            // breeze seeds its first trial with the unregularized value at x, not the value just computed
            fval = st.startValue();
            st.searchStage(1).searchTrial(0);
        } else {
            fval = fv;
            st.searchTrial(st.searchTrial() + 1);
        }
        final double f0 = st.searchValue();
        final double df0 = st.searchSlope();
        final double shrink = st.shrink();
        final double factor;
        if (fval > f0 + alpha * df0 * ARMIJO) {
            factor = shrink;
        } else if (dd < WOLFE * df0) {
            factor = GROW;
        } else if (dd > -WOLFE * df0) {
            factor = shrink;
        } else {
            return LineSearch.ACCEPT_LAST;
        }
        final int iter = st.searchTrial();
        final double next = alpha * factor;
        if (iter >= MAX_TRIALS) {
            throw new SearchFailure("line search failed");
        }
        if (next < MIN_STEP) {
            throw new SearchFailure("step size underflow");
        }
        if (next > MAX_STEP) {
            throw new SearchFailure("step size overflow");
        }
        if (iter + 1 >= MAX_TRIALS) {
            return LineSearch.ACCEPT_OTHER; // breeze stops before its 20th trial and keeps the current step
        }
        st.step(next);
        return LineSearch.CONTINUE;
    }
}

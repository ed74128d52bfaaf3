package org.switchml.optim;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A quasi-Newton minimizer written as a step machine over a flat {@code double[]} state, so that it can
 * be carried through Spark's replicated loop (every task holds an identical copy) and checkpointed. The
 * objective is evaluated outside: the machine names the point it needs ({@link #pendingPoint}), the
 * caller evaluates value and gradient there (in the loop: one allreduce) and hands them back with
 * {@link #receive}, which returns the next state. Nothing else is remembered between calls. The state's
 * layout is {@link OptimizerState}'s.
 *
 * <p>The iterates follow breeze 2.1.0's {@code FirstOrderMinimizer} as MLlib 4.0.1 drives it: the same
 * line searches and initial steps, the same failure handling (the first failure resets the curvature
 * history, a second one in a row stops with "line search failed"), and the same default convergence
 * checks: {@code iter >= maxIter}; the adjusted value within {@code tol * |f(x0)|} of the largest of the
 * last 20 adjusted values (which, as in breeze, can only fire once 20 values are remembered); the
 * adjusted gradient's norm at most {@code max(tol * |f|, 1e-8)}; a failed search. Every emitted breeze
 * state appends its adjusted value to {@link #objectiveHistory}, which is what MLlib reports.
 *
 * <p>Determinism: plain loops in a fixed order, no parallelism, no native code, so the same inputs give
 * the same bits on every JVM. Evaluations that breeze's cache would answer (the line search's value at
 * step 0, the accepted point) are answered from the state, so they cost no round.
 *
 * <p>Large models: {@link #receiveInPlace} updates the state in its own array, and the dot products
 * of the stored pairs are kept rather than recomputed, so an iteration passes over the {@code (s, y)}
 * vectors about 4m times and copies none of them (10^7 coefficients: a 1.9 GB state); {@link Lbfgs}
 * computes its direction vector-free from 2^18 coefficients on, in two passes.
 */
public abstract class QuasiNewton implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Number of coefficients. */
    protected final int n;
    /** Curvature pairs kept. */
    protected final int m;
    /** breeze's maxIter (iterations, not evaluations). */
    protected final int maxIter;
    /** breeze's tolerance (MLlib's tol). */
    protected final double tol;

    private final OptimizerState.Layout layout;

    /** Why the machine stopped (breeze's ConvergenceReason). */
    public enum Reason {
        /** Still running. */
        NONE,
        /** iter reached maxIter. */
        MAX_ITERATIONS,
        /** The adjusted value stopped improving relative to the last 20. */
        FUNCTION_VALUES_CONVERGED,
        /** The adjusted gradient's norm fell below the tolerance. */
        GRADIENT_CONVERGED,
        /** Two failures in a row. */
        SEARCH_FAILED,
        /** L-BFGS-B: the projected gradient step is below 1e-5 (infinity norm). */
        PROJECTED_STEP_CONVERGED
    }

    /**
     * @param kind      which optimizer, recorded in its states
     * @param vectors   vectors of length n before the pairs (x, grad, dir[, pseudo-gradient])
     * @param registers the optimizer's own header slots ({@link OptimizerState#registers})
     */
    QuasiNewton(
            final int kind,
            final int n,
            final int m,
            final int maxIter,
            final double tol,
            final int vectors,
            final int registers) {
        if (n <= 0 || m <= 0 || maxIter < 0 || !(tol >= 0)) {
            throw new IllegalArgumentException("need n > 0, m > 0, maxIter >= 0, tol >= 0: n=" + n + ", m=" + m
                    + ", maxIter=" + maxIter + ", tol=" + tol);
        }
        // At most one failure per successful iteration (plus one before the first), plus the final one.
        final long historyCapacity = 2L * maxIter + 4;
        if (historyCapacity > 10_000_000L) {
            throw new IllegalArgumentException("maxIter " + maxIter + " is too large for the objective history");
        }
        this.n = n;
        this.m = m;
        this.maxIter = maxIter;
        this.tol = tol;
        this.layout = new OptimizerState.Layout(kind, n, m, vectors, (int) historyCapacity, registers);
        if (layout.maxLength() > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("state of " + layout.maxLength() + " doubles does not fit one array "
                    + "(n=" + n + ", m=" + m + ")");
        }
    }

    /** The flyweight over {@code state}, which must be a state of this optimizer. */
    final OptimizerState state(final double[] state) {
        return OptimizerState.wrap(layout, state, getClass().getSimpleName());
    }

    // ---------------------------------------------------------------- public API

    /** Number of coefficients. */
    public final int dimension() {
        return n;
    }

    /** Length of the state once every curvature pair is stored. */
    public final int maxStateLength() {
        return (int) layout.maxLength();
    }

    /** The initial state: it asks for the objective at {@code x0}. */
    public double[] start(final double[] x0) {
        if (x0.length != n) {
            throw new IllegalArgumentException("x0 has length " + x0.length + ", expected " + n);
        }
        checkStart(x0);
        return OptimizerState.start(layout, x0).buffer();
    }

    /** Whether the machine has stopped; then {@link #solution} is the answer. */
    public final boolean done(final double[] state) {
        return state(state).phase() == OptimizerState.Phase.DONE;
    }

    /** The point at which the next value and gradient are needed (a fresh array). */
    public final double[] pendingPoint(final double[] state) {
        final double[] out = new double[n];
        pendingPoint(state, out);
        return out;
    }

    /** Writes the point at which the next value and gradient are needed into {@code out}. */
    public final void pendingPoint(final double[] state, final double[] out) {
        final OptimizerState st = state(state);
        switch (st.phase()) {
            case START -> st.x().copyTo(out);
            case SEARCH, ACCEPT -> takeStep(st, st.step(), out);
            default -> throw new IllegalStateException("the optimizer has stopped (" + st.reason() + ")");
        }
    }

    /**
     * Hands over the objective's value and gradient at {@link #pendingPoint} and returns the next
     * state. {@code state} and {@code gradient} are not modified.
     */
    public final double[] receive(final double[] state, final double value, final double[] gradient) {
        return next(state, value, gradient, false, null);
    }

    /**
     * As {@link #receive}, but the next state may be {@code state} itself, updated in place (the caller
     * must drop every other use of it): no copy of the state per evaluation. The next state is the same
     * bits either way.
     */
    public final double[] receiveInPlace(final double[] state, final double value, final double[] gradient) {
        return next(state, value, gradient, true, null);
    }

    /**
     * As {@link #receiveInPlace}, given also {@code point}, what {@link #pendingPoint} returned for
     * {@code state} (not modified): an accepted step then takes it as the new x instead of computing it
     * again. The next state is the same bits.
     */
    public final double[] receiveInPlace(
            final double[] state, final double value, final double[] gradient, final double[] point) {
        if (point.length != n) {
            throw new IllegalArgumentException("point has length " + point.length + ", expected " + n);
        }
        return next(state, value, gradient, true, point);
    }

    private double[] next(
            final double[] state,
            final double value,
            final double[] gradient,
            final boolean inPlace,
            final double[] point) {
        OptimizerState st = state(state);
        if (gradient.length != n) {
            throw new IllegalArgumentException("gradient has length " + gradient.length + ", expected " + n);
        }
        final int evaluations = st.evaluations();
        switch (st.phase()) {
            case START -> {
                // Room for all m pairs at once: growing later would copy the working vectors and need the
                // old and the new state at once (2.2 GB at 10^7 coefficients).
                st.growToMaxLength();
                initial(st, value, gradient);
            }
            case SEARCH -> {
                st = inPlace ? st : state(state.clone());
                onSearchEvaluation(st, value, gradient, point);
            }
            case ACCEPT -> {
                st = inPlace ? st : state(state.clone());
                finishIteration(st, st.step(), value, gradient, point);
            }
            default -> throw new IllegalStateException("the optimizer has stopped (" + st.reason() + ")");
        }
        return st.evaluations(evaluations + 1).buffer();
    }

    /**
     * The state without its working vectors once the machine is {@link #done}: header and x, enough for
     * {@link #solution}, {@link #objectiveHistory}, {@link #iterations}, {@link #evaluations} and
     * {@link #reason} (what a fit returns to the driver, at 1/23 of the size with m = 10).
     */
    public final double[] finalState(final double[] state) {
        final OptimizerState st = state(state);
        if (st.phase() != OptimizerState.Phase.DONE) {
            throw new IllegalStateException("the optimizer has not stopped");
        }
        return st.headerAndX();
    }

    /** Entries of {@link #objectiveHistory} so far. */
    public final int objectiveHistoryLength(final double[] state) {
        return state(state).historyLength();
    }

    /** The current iterate x (the answer once {@link #done}). */
    public final double[] solution(final double[] state) {
        return state(state).x().copy();
    }

    /** breeze's {@code state.iter}: completed iterations. */
    public final int iterations(final double[] state) {
        return state(state).iterations();
    }

    /** Evaluations received so far (one allreduce each in the loop). */
    public final int evaluations(final double[] state) {
        return state(state).evaluations();
    }

    /** The adjusted value (objective plus L1 for OWL-QN) at x; NaN before the first evaluation. */
    public final double adjustedValue(final double[] state) {
        final OptimizerState st = state(state);
        return st.phase() == OptimizerState.Phase.START ? Double.NaN : st.adjustedValue();
    }

    /** L2 norm of the adjusted gradient at x; NaN before the first evaluation. */
    public final double adjustedGradientNorm(final double[] state) {
        final OptimizerState st = state(state);
        return st.phase() == OptimizerState.Phase.START ? Double.NaN : adjustedGradientNorm(st);
    }

    /** The adjusted value of every emitted breeze state, the initial one first: MLlib's objectiveHistory. */
    public final double[] objectiveHistory(final double[] state) {
        return state(state).history();
    }

    /**
     * The most objective evaluations one line search can ask for: with two searches per iteration at most
     * (a failed one and its retry), it bounds the evaluations of {@code maxIter} iterations.
     */
    public abstract int maxEvaluationsPerSearch();

    /** Why it stopped ({@link Reason#NONE} while running). */
    public final Reason reason(final double[] state) {
        return state(state).reason();
    }

    /**
     * Runs the machine to the end with a local objective (tests, driver-side use).
     *
     * @param f  value and gradient at a point: writes the gradient into its second argument, returns the value
     * @param x0 the start
     * @return the final state
     */
    public final double[] minimize(final Objective f, final double[] x0) {
        double[] s = start(x0);
        final double[] p = new double[n];
        final double[] g = new double[n];
        while (!done(s)) {
            pendingPoint(s, p);
            Arrays.fill(g, 0.0);
            final double v = f.valueAndGradient(p, g);
            s = receiveInPlace(s, v, g, p);
        }
        return s;
    }

    /** A local objective for {@link #minimize}. */
    @FunctionalInterface
    public interface Objective {
        /** Returns f(x) and writes its gradient into {@code grad} (zeroed on entry). */
        double valueAndGradient(double[] x, double[] grad);
    }

    // ---------------------------------------------------------------- optimizer hooks

    /** The adjusted gradient at x (the pseudo-gradient for OWL-QN, else grad). */
    OptimizerState.Vector adjustedGradient(final OptimizerState st) {
        return st.grad();
    }

    /** Validates x0 (bounds). */
    void checkStart(final double[] x0) {}

    /**
     * Sets the adjusted value (and the adjusted gradient) from the value, x and grad. A smooth objective
     * (L-BFGS, L-BFGS-B) is its own adjusted value; OWL-QN adds its L1 term.
     */
    void adjustAtX(final OptimizerState st) {
        st.adjustedValue(st.value());
    }

    /**
     * The line search's value and directional derivative for an evaluation at step {@code alpha}: for a
     * smooth objective, the value and the gradient along the direction; OWL-QN adds its L1 term.
     */
    void phi(
            final OptimizerState st, final double alpha, final double value, final double[] grad, final double[] out2) {
        out2[0] = value;
        out2[1] = st.dir().dot(grad);
    }

    /** Computes the search direction into dir; throws {@link SearchFailure} as breeze does. */
    abstract void direction(OptimizerState st);

    /** Starts the line search: sets the first trial step (or throws {@link SearchFailure}). */
    abstract void beginSearch(OptimizerState st);

    /** One line-search step with the value and derivative at the current trial step. */
    abstract LineSearch searchStep(OptimizerState st, double fv, double dd);

    /** The check after the search returned (L-BFGS: step-size underflow). */
    void afterSearch(final OptimizerState st, final double alpha) {}

    /** x + alpha * dir, as the optimizer steps (projected for OWL-QN and L-BFGS-B). */
    abstract void takeStep(OptimizerState st, double alpha, double[] out);

    /** Adds the pair (newX - x, newGrad - grad) when the optimizer accepts it; may grow the state. */
    abstract void updateHistory(OptimizerState st, double[] newX, double[] newGrad);

    /**
     * {@link #updateHistory}, then x := newX and grad := newGrad in the state. Optimizers may do the moves
     * in the sweep that stores the pair.
     */
    void updateHistoryAndMove(final OptimizerState st, final double[] newX, final double[] newGrad) {
        updateHistory(st, newX, newGrad);
        st.x().copyFrom(newX);
        st.grad().copyFrom(newGrad);
    }

    /**
     * The L2 norm of the adjusted gradient at x. Optimizers may answer from the sum of squares of a sweep
     * they made anyway, if it has the same bits (the same products, added in the same order).
     */
    double adjustedGradientNorm(final OptimizerState st) {
        return adjustedGradient(st).norm();
    }

    /** Drops every pair (breeze's initialHistory). */
    void resetHistory(final OptimizerState st) {
        new CurvatureHistory(st).clear();
    }

    /** An optimizer-specific convergence test checked before the default ones (L-BFGS-B). */
    boolean extraConverged(final OptimizerState st) {
        return false;
    }

    // ---------------------------------------------------------------- the machine

    private void initial(final OptimizerState st, final double value, final double[] grad) {
        st.value(value);
        st.grad().copyFrom(grad);
        adjustAtX(st);
        st.iterations(0)
                .initialAdjustedValue(st.adjustedValue())
                .resetValueMemory()
                .appendHistory();
        checkOrContinue(st);
    }

    private void onSearchEvaluation(
            final OptimizerState st, final double value, final double[] grad, final double[] point) {
        final double alpha = st.step();
        final double[] fd = new double[2];
        phi(st, alpha, value, grad, fd);
        final LineSearch outcome;
        try {
            outcome = searchStep(st, fd[0], fd[1]);
            if (outcome != LineSearch.CONTINUE) {
                afterSearch(st, st.step());
            }
        } catch (final SearchFailure e) {
            failed(st);
            return;
        }
        if (outcome == LineSearch.ACCEPT_LAST) {
            finishIteration(st, alpha, value, grad, point);
        } else if (outcome == LineSearch.ACCEPT_OTHER) {
            st.phase(OptimizerState.Phase.ACCEPT); // the accepted point was not the last one evaluated
        }
    }

    /** {@code point}: the pending point (the step at {@code alpha}) if the caller has it, else null. */
    private void finishIteration(
            final OptimizerState st,
            final double alpha,
            final double value,
            final double[] grad,
            final double[] point) {
        final double[] newX;
        if (point != null) {
            newX = point;
        } else {
            newX = new double[n];
            takeStep(st, alpha, newX);
        }
        updateHistoryAndMove(st, newX, grad);
        st.value(value);
        adjustAtX(st);
        st.rememberValue(st.adjustedValue())
                .failedOnce(false)
                .iterations(st.iterations() + 1)
                .appendHistory();
        checkOrContinue(st);
    }

    /** breeze's catch block: reset the history once (emitting the same state again), then give up. */
    private void failed(final OptimizerState st) {
        if (!st.failedOnce()) {
            st.failedOnce(true);
            resetHistory(st);
        } else {
            st.searchFailed(true);
        }
        st.appendHistory();
        checkOrContinue(st);
    }

    /** Stops if a convergence check fires; otherwise starts the next iteration's line search. */
    private void checkOrContinue(final OptimizerState st) {
        final Reason r = converged(st);
        if (r != Reason.NONE) {
            st.reason(r).phase(OptimizerState.Phase.DONE);
            return;
        }
        try {
            direction(st);
            beginSearch(st);
        } catch (final SearchFailure e) {
            failed(st);
            return;
        }
        st.phase(OptimizerState.Phase.SEARCH);
    }

    private Reason converged(final OptimizerState st) {
        if (extraConverged(st)) {
            return Reason.PROJECTED_STEP_CONVERGED;
        }
        if (st.iterations() >= maxIter) {
            return Reason.MAX_ITERATIONS;
        }
        if (st.rememberedValues() >= 2
                && Math.abs(st.adjustedValue() - st.largestRememberedValue())
                        <= tol * Math.abs(st.initialAdjustedValue())) {
            return Reason.FUNCTION_VALUES_CONVERGED;
        }
        if (adjustedGradientNorm(st) <= Math.max(tol * Math.abs(st.adjustedValue()), 1e-8)) {
            return Reason.GRADIENT_CONVERGED;
        }
        if (st.searchFailed()) {
            return Reason.SEARCH_FAILED;
        }
        return Reason.NONE;
    }
}

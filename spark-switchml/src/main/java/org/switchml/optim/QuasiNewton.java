package org.switchml.optim;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A quasi-Newton minimizer written as a step machine over a flat {@code double[]} state, so that it can
 * be carried through {@code ReplicatedLoop} (every task holds an identical copy) and checkpointed. The
 * objective is evaluated outside: the machine names the point it needs ({@link #pendingPoint}), the
 * caller evaluates value and gradient there (in the loop: one allreduce) and hands them back with
 * {@link #receive}, which returns the next state. Nothing else is remembered between calls.
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
 * <p>Layout of the state: a header (scalars, line search registers, the last 20 adjusted values, the
 * objective history, the pairs' ring position and their dot products {@code s.y} and {@code y.y}, and
 * for L-BFGS-B the 2k x 2k middle matrix), then vectors of length {@code n}: {@code x}, {@code grad},
 * {@code dir} (plus the pseudo-gradient for OWL-QN), then room for {@code m} curvature pairs
 * {@code (s, y)} used as a ring: a new pair overwrites the oldest, so nothing moves once {@code m} are
 * stored. Before the first evaluation the state holds {@code x} only; the first evaluation makes
 * room for everything at once ({@link #maxStateLength()}), as does the first pair after the history was
 * dropped.
 *
 * <p>Large models: {@link #receiveInPlace} updates the state in its own array, and the dot products
 * of the stored pairs are kept rather than recomputed, so an iteration passes over the {@code (s, y)}
 * vectors about 4m times and copies none of them (10^7 coefficients: a 1.9 GB state); {@link Lbfgs}
 * computes its direction vector-free from 2^18 coefficients on, in two passes.
 */
public abstract class QuasiNewton implements Serializable {
    private static final long serialVersionUID = 1L;

    /** How many adjusted values breeze's function-values check remembers (its default fvalMemory). */
    static final int FVAL_MEMORY = 20;

    // Header slots.
    static final int KIND = 0;
    static final int DIM = 1;
    static final int PHASE = 2;
    static final int ITER = 3;
    static final int VALUE = 4;
    static final int ADJ_VALUE = 5;
    static final int INIT_ADJ_VALUE = 6;
    static final int FAILED_ONCE = 7;
    static final int SEARCH_FAILED = 8;
    static final int REASON = 9;
    static final int PAIRS = 10;
    static final int EVALS = 11;
    /** Step of the pending point (SEARCH and ACCEPT phases). */
    static final int ALPHA = 12;
    static final int LS_STAGE = 13;
    static final int LS_I = 14;
    static final int LS_BOUND = 15;
    static final int LS_F0 = 16;
    static final int LS_DD0 = 17;
    static final int LOW_T = 18;
    static final int LOW_DD = 19;
    static final int LOW_F = 20;
    static final int HI_T = 21;
    static final int HI_DD = 22;
    static final int HI_F = 23;
    static final int BT_F = 24;
    static final int BT_D = 25;
    static final int BT_SHRINK = 26;
    static final int BT_INIT_F = 27;
    static final int THETA = 28;
    static final int FV_COUNT = 29;
    static final int FV = 30;
    static final int OBJ_COUNT = FV + FVAL_MEMORY;
    static final int OBJ = OBJ_COUNT + 1;

    // Phases.
    static final int START = 0;
    static final int SEARCH = 1;
    static final int ACCEPT = 2;
    static final int DONE = 3;

    // Outcomes of one line-search step.
    static final int CONTINUE = 0;
    static final int ACCEPT_LAST = 1;
    static final int ACCEPT_OTHER = 2;

    /** Number of coefficients. */
    protected final int n;
    /** Curvature pairs kept. */
    protected final int m;
    /** breeze's maxIter (iterations, not evaluations). */
    protected final int maxIter;
    /** breeze's tolerance (MLlib's tol). */
    protected final double tol;
    private final int kind;
    private final int objCapacity;
    /** Header slot of the ring's oldest pair (0 .. m-1). */
    private final int ring;
    /** Header slots of {@code s.y} and {@code y.y} of each pair, by ring slot. */
    private final int pairDots;
    /** First header slot after the shared registers (optimizer-specific registers). */
    protected final int extra;
    /** Header length: offset of x. */
    protected final int header;

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

    /** breeze's FirstOrderException: the iteration failed; the history is reset once, then it gives up. */
    static final class SearchFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SearchFailure(final String message) {
            super(message, null, false, false);
        }
    }

    QuasiNewton(final int kind, final int n, final int m, final int maxIter, final double tol, final int extraSlots) {
        if (n <= 0 || m <= 0 || maxIter < 0 || !(tol >= 0)) {
            throw new IllegalArgumentException("need n > 0, m > 0, maxIter >= 0, tol >= 0: n=" + n + ", m=" + m
                    + ", maxIter=" + maxIter + ", tol=" + tol);
        }
        // At most one failure per successful iteration (plus one before the first), plus the final one.
        final long cap = 2L * maxIter + 4;
        if (cap > 10_000_000L) {
            throw new IllegalArgumentException("maxIter " + maxIter + " is too large for the objective history");
        }
        this.kind = kind;
        this.n = n;
        this.m = m;
        this.maxIter = maxIter;
        this.tol = tol;
        this.objCapacity = (int) cap;
        this.ring = OBJ + objCapacity;
        this.pairDots = ring + 1;
        this.extra = pairDots + 2 * m;
        this.header = extra + extraSlots;
        final long max = (long) header + (vectors() + 2L * m) * n;
        if (max > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("state of " + max + " doubles does not fit one array (n=" + n
                    + ", m=" + m + ")");
        }
    }

    // ---------------------------------------------------------------- public API

    /** Number of coefficients. */
    public final int dimension() {
        return n;
    }

    /** Length of the state once every curvature pair is stored. */
    public final int maxStateLength() {
        return header + (vectors() + 2 * m) * n;
    }

    /** The initial state: it asks for the objective at {@code x0}. */
    public double[] start(final double[] x0) {
        if (x0.length != n) {
            throw new IllegalArgumentException("x0 has length " + x0.length + ", expected " + n);
        }
        checkStart(x0);
        final double[] s = new double[header + n];
        s[KIND] = kind;
        s[DIM] = n;
        s[PHASE] = START;
        s[THETA] = 1.0;
        System.arraycopy(x0, 0, s, header, n);
        return s;
    }

    /** Whether the machine has stopped; then {@link #solution} is the answer. */
    public final boolean done(final double[] state) {
        check(state);
        return state[PHASE] == DONE;
    }

    /** The point at which the next value and gradient are needed (a fresh array). */
    public final double[] pendingPoint(final double[] state) {
        final double[] out = new double[n];
        pendingPoint(state, out);
        return out;
    }

    /** Writes the point at which the next value and gradient are needed into {@code out}. */
    public final void pendingPoint(final double[] state, final double[] out) {
        check(state);
        switch ((int) state[PHASE]) {
            case START -> System.arraycopy(state, header, out, 0, n);
            case SEARCH, ACCEPT -> takeStep(state, state[ALPHA], out);
            default -> throw new IllegalStateException("the optimizer has stopped (" + reason(state) + ")");
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
    public final double[] receiveInPlace(final double[] state, final double value, final double[] gradient,
                                         final double[] point) {
        if (point.length != n) {
            throw new IllegalArgumentException("point has length " + point.length + ", expected " + n);
        }
        return next(state, value, gradient, true, point);
    }

    private double[] next(final double[] state, final double value, final double[] gradient, final boolean inPlace,
                          final double[] point) {
        check(state);
        if (gradient.length != n) {
            throw new IllegalArgumentException("gradient has length " + gradient.length + ", expected " + n);
        }
        final int phase = (int) state[PHASE];
        final double evaluations = state[EVALS];
        double[] s;
        switch (phase) {
            case START -> {
                // Room for all m pairs at once: growing later would copy the working vectors and need the
                // old and the new state at once (2.2 GB at 10^7 coefficients).
                s = Arrays.copyOf(state, maxStateLength());
                s = initial(s, value, gradient);
            }
            case SEARCH -> s = onSearchEvaluation(inPlace ? state : state.clone(), value, gradient, point);
            case ACCEPT -> {
                final double[] t = inPlace ? state : state.clone();
                s = finishIteration(t, t[ALPHA], value, gradient, point);
            }
            default -> throw new IllegalStateException("the optimizer has stopped (" + reason(state) + ")");
        }
        s[EVALS] = evaluations + 1;
        return s;
    }

    /**
     * The state without its working vectors once the machine is {@link #done}: header and x, enough for
     * {@link #solution}, {@link #objectiveHistory}, {@link #iterations}, {@link #evaluations} and
     * {@link #reason} (what a fit returns to the driver, at 1/23 of the size with m = 10).
     */
    public final double[] finalState(final double[] state) {
        check(state);
        if (state[PHASE] != DONE) {
            throw new IllegalStateException("the optimizer has not stopped");
        }
        return state.length == header + n ? state : Arrays.copyOf(state, header + n);
    }

    /** Entries of {@link #objectiveHistory} so far. */
    public final int objectiveHistoryLength(final double[] state) {
        check(state);
        return (int) state[OBJ_COUNT];
    }

    /** The current iterate x (the answer once {@link #done}). */
    public final double[] solution(final double[] state) {
        check(state);
        return Arrays.copyOfRange(state, header, header + n);
    }

    /** breeze's {@code state.iter}: completed iterations. */
    public final int iterations(final double[] state) {
        check(state);
        return (int) state[ITER];
    }

    /** Evaluations received so far (one allreduce each in the loop). */
    public final int evaluations(final double[] state) {
        check(state);
        return (int) state[EVALS];
    }

    /** The adjusted value (objective plus L1 for OWL-QN) at x; NaN before the first evaluation. */
    public final double adjustedValue(final double[] state) {
        check(state);
        return state[PHASE] == START ? Double.NaN : state[ADJ_VALUE];
    }

    /** L2 norm of the adjusted gradient at x; NaN before the first evaluation. */
    public final double adjustedGradientNorm(final double[] state) {
        check(state);
        return state[PHASE] == START ? Double.NaN : adjustedGradientNormOf(state);
    }

    /** The adjusted value of every emitted breeze state, the initial one first: MLlib's objectiveHistory. */
    public final double[] objectiveHistory(final double[] state) {
        check(state);
        return Arrays.copyOfRange(state, OBJ, OBJ + (int) state[OBJ_COUNT]);
    }

    /**
     * The most objective evaluations one line search can ask for: with two searches per iteration at most
     * (a failed one and its retry), it bounds the evaluations of {@code maxIter} iterations.
     */
    public abstract int maxEvaluationsPerSearch();

    /** Why it stopped ({@link Reason#NONE} while running). */
    public final Reason reason(final double[] state) {
        return Reason.values()[(int) state[REASON]];
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

    /** Vectors of length n before the pairs (x, grad, dir[, pseudo-gradient]). */
    abstract int vectors();

    /** Offset of the adjusted gradient (the pseudo-gradient for OWL-QN, else grad). */
    int adjGradOffset() {
        return header + n;
    }

    /** Validates x0 (bounds). */
    void checkStart(final double[] x0) {
    }

    /**
     * Sets ADJ_VALUE (and the adjusted gradient) from VALUE, x and grad. A smooth objective (L-BFGS,
     * L-BFGS-B) is its own adjusted value; OWL-QN adds its L1 term.
     */
    void adjustAtX(final double[] s) {
        s[ADJ_VALUE] = s[VALUE];
    }

    /**
     * The line search's value and directional derivative for an evaluation at step {@code alpha}: for a
     * smooth objective, the value and the gradient along the direction; OWL-QN adds its L1 term.
     */
    void phi(final double[] s, final double alpha, final double value, final double[] grad, final double[] out2) {
        out2[0] = value;
        out2[1] = dot(grad, 0, s, dirOff(), n);
    }

    /** Computes the search direction into dir; throws {@link SearchFailure} as breeze does. */
    abstract void direction(double[] s);

    /** Starts the line search: sets ALPHA to the first trial step (or throws {@link SearchFailure}). */
    abstract void beginSearch(double[] s);

    /** One line-search step with the value and derivative at ALPHA. */
    abstract int searchStep(double[] s, double fv, double dd);

    /** The check after the search returned (L-BFGS: step-size underflow). */
    void afterSearch(final double[] s, final double alpha) {
    }

    /** x + alpha * dir, as the optimizer steps (projected for OWL-QN and L-BFGS-B). */
    abstract void takeStep(double[] s, double alpha, double[] out);

    /** Adds the pair (newX - x, newGrad - grad) when the optimizer accepts it; may reallocate. */
    abstract double[] updateHistory(double[] s, double[] newX, double[] newGrad);

    /**
     * {@link #updateHistory}, then x := newX and grad := newGrad in the state. Optimizers may do the moves
     * in the sweep that stores the pair.
     */
    double[] updateHistoryAndMove(double[] s, final double[] newX, final double[] newGrad) {
        s = updateHistory(s, newX, newGrad);
        System.arraycopy(newX, 0, s, header, n);
        System.arraycopy(newGrad, 0, s, header + n, n);
        return s;
    }

    /**
     * The L2 norm of the adjusted gradient at x. Optimizers may answer from the sum of squares of a sweep
     * they made anyway, if it has the same bits (the same products, added in the same order).
     */
    double adjustedGradientNormOf(final double[] s) {
        return norm(s, adjGradOffset(), n);
    }

    /** Drops every pair (breeze's initialHistory). */
    double[] resetHistory(final double[] s) {
        s[PAIRS] = 0;
        s[THETA] = 1.0;
        s[ring] = 0;
        return Arrays.copyOf(s, header + vectors() * n);
    }

    /** An optimizer-specific convergence test checked before the default ones (L-BFGS-B). */
    boolean extraConverged(final double[] s) {
        return false;
    }

    // ---------------------------------------------------------------- the machine

    private double[] initial(final double[] s, final double value, final double[] grad) {
        s[VALUE] = value;
        System.arraycopy(grad, 0, s, header + n, n);
        adjustAtX(s);
        s[ITER] = 0;
        s[INIT_ADJ_VALUE] = s[ADJ_VALUE];
        s[FV_COUNT] = 1;
        s[FV] = Double.POSITIVE_INFINITY;
        emit(s);
        return checkOrContinue(s);
    }

    private double[] onSearchEvaluation(final double[] s, final double value, final double[] grad,
                                        final double[] point) {
        final double alpha = s[ALPHA];
        final double[] fd = new double[2];
        phi(s, alpha, value, grad, fd);
        final int outcome;
        try {
            outcome = searchStep(s, fd[0], fd[1]);
            if (outcome != CONTINUE) {
                afterSearch(s, s[ALPHA]);
            }
        } catch (final SearchFailure e) {
            return failed(s);
        }
        if (outcome == ACCEPT_LAST) {
            return finishIteration(s, alpha, value, grad, point);
        }
        if (outcome == ACCEPT_OTHER) {
            s[PHASE] = ACCEPT; // the accepted point was not the last one evaluated: evaluate it again
        }
        return s;
    }

    /** {@code point}: the pending point (the step at {@code alpha}) if the caller has it, else null. */
    private double[] finishIteration(double[] s, final double alpha, final double value, final double[] grad,
                                     final double[] point) {
        final double[] newX;
        if (point != null) {
            newX = point;
        } else {
            newX = new double[n];
            takeStep(s, alpha, newX);
        }
        s = updateHistoryAndMove(s, newX, grad);
        s[VALUE] = value;
        adjustAtX(s);
        rememberValue(s, s[ADJ_VALUE]);
        s[FAILED_ONCE] = 0;
        s[ITER] = s[ITER] + 1;
        emit(s);
        return checkOrContinue(s);
    }

    /** breeze's catch block: reset the history once (emitting the same state again), then give up. */
    private double[] failed(double[] s) {
        if (s[FAILED_ONCE] == 0) {
            s[FAILED_ONCE] = 1;
            s = resetHistory(s);
            emit(s);
            return checkOrContinue(s);
        }
        s[SEARCH_FAILED] = 1;
        emit(s);
        return checkOrContinue(s);
    }

    /** Stops if a convergence check fires; otherwise starts the next iteration's line search. */
    private double[] checkOrContinue(final double[] s) {
        final Reason r = converged(s);
        if (r != Reason.NONE) {
            s[REASON] = r.ordinal();
            s[PHASE] = DONE;
            return s;
        }
        try {
            direction(s);
            beginSearch(s);
        } catch (final SearchFailure e) {
            return failed(s);
        }
        s[PHASE] = SEARCH;
        return s;
    }

    private Reason converged(final double[] s) {
        if (extraConverged(s)) {
            return Reason.PROJECTED_STEP_CONVERGED;
        }
        if (s[ITER] >= maxIter) {
            return Reason.MAX_ITERATIONS;
        }
        final int count = (int) s[FV_COUNT];
        if (count >= 2) {
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < count; i++) {
                max = Math.max(max, s[FV + i]);
            }
            if (Math.abs(s[ADJ_VALUE] - max) <= tol * Math.abs(s[INIT_ADJ_VALUE])) {
                return Reason.FUNCTION_VALUES_CONVERGED;
            }
        }
        if (adjustedGradientNormOf(s) <= Math.max(tol * Math.abs(s[ADJ_VALUE]), 1e-8)) {
            return Reason.GRADIENT_CONVERGED;
        }
        if (s[SEARCH_FAILED] != 0) {
            return Reason.SEARCH_FAILED;
        }
        return Reason.NONE;
    }

    private static void rememberValue(final double[] s, final double v) {
        int count = (int) s[FV_COUNT];
        if (count == FVAL_MEMORY) {
            System.arraycopy(s, FV + 1, s, FV, FVAL_MEMORY - 1);
            count--;
        }
        s[FV + count] = v;
        s[FV_COUNT] = count + 1;
    }

    private void emit(final double[] s) {
        final int c = (int) s[OBJ_COUNT];
        if (c == objCapacity) {
            throw new IllegalStateException("objective history overflow (" + c + " entries)");
        }
        s[OBJ + c] = s[ADJ_VALUE];
        s[OBJ_COUNT] = c + 1;
    }

    private void check(final double[] s) {
        if (s == null || s.length < header + n || s[KIND] != kind || s[DIM] != n) {
            throw new IllegalArgumentException("not a state of this " + getClass().getSimpleName() + " (n=" + n + ")");
        }
    }

    // ---------------------------------------------------------------- shared pieces

    /** Offset of x, grad and dir. */
    final int xOff() {
        return header;
    }

    final int gradOff() {
        return header + n;
    }

    final int dirOff() {
        return header + 2 * n;
    }

    /** Ring slot of stored pair j (j = 0 oldest). */
    final int slot(final double[] s, final int j) {
        return ((int) s[ring] + j) % m;
    }

    /** Offset of s_j (j = 0 oldest); y_j follows it. */
    final int pairOff(final double[] s, final int j) {
        return header + vectors() * n + 2 * slot(s, j) * n;
    }

    /** {@code s_j . y_j} of stored pair j, computed once when it was stored. */
    final double pairSy(final double[] s, final int j) {
        return s[pairDotsOffset(slot(s, j))];
    }

    /** Header slot of {@code s.y} of the pair in ring slot {@code slot}; {@code y.y} follows it. */
    final int pairDotsOffset(final int slot) {
        return pairDots + 2 * slot;
    }

    /** {@code y_j . y_j} of stored pair j. */
    final double pairYy(final double[] s, final int j) {
        return s[pairDotsOffset(slot(s, j)) + 1];
    }

    /**
     * Stores (sv, yv) as the newest pair, over the oldest when m are stored. The first pair makes room
     * for all m at once (one allocation, rather than one copy of a growing state per pair).
     */
    final double[] pushPair(double[] s, final double[] sv, final double[] yv) {
        s = claimNewestPair(s);
        final int slot = slot(s, (int) s[PAIRS] - 1);
        final int off = header + vectors() * n + 2 * slot * n;
        System.arraycopy(sv, 0, s, off, n);
        System.arraycopy(yv, 0, s, off + n, n);
        s[pairDotsOffset(slot)] = dot(sv, 0, yv, 0, n);
        s[pairDotsOffset(slot) + 1] = dot(yv, 0, yv, 0, n);
        return s;
    }

    /**
     * Makes the newest pair's place, {@code slot(s, pairs - 1)} afterwards: over the oldest when m are stored
     * (the ring turns), else the next free one. Returns the state, grown to room for all m pairs at once on
     * the first pair.
     */
    final double[] claimNewestPair(double[] s) {
        final int k = (int) s[PAIRS];
        if (k == m) {
            s[ring] = ((int) s[ring] + 1) % m;
            return s;
        }
        if (s.length < maxStateLength()) {
            s = Arrays.copyOf(s, maxStateLength());
        }
        s[PAIRS] = k + 1; // the ring starts at 0 and has not wrapped
        return s;
    }

    /**
     * {@link #pushPair} of {@code (newX - x, newGrad - grad)} with x and grad of the state, computed in
     * place in the pair's slot, with its two dot products in the same sweep: no temporary vectors and
     * one pass over n instead of four (the same bits).
     */
    final double[] pushDifferencePair(double[] s, final double[] newX, final double[] newGrad) {
        s = claimNewestPair(s);
        final int slot = slot(s, (int) s[PAIRS] - 1);
        final int off = header + vectors() * n + 2 * slot * n;
        final int yo = off + n;
        final int x = xOff();
        final int g = gradOff();
        double sy = 0.0;
        double yy = 0.0;
        for (int i = 0; i < n; i++) {
            final double sv = newX[i] - s[x + i];
            final double yv = newGrad[i] - s[g + i];
            s[off + i] = sv;
            s[yo + i] = yv;
            sy += sv * yv;
            yy += yv * yv;
        }
        s[pairDotsOffset(slot)] = sy;
        s[pairDotsOffset(slot) + 1] = yy;
        return s;
    }

    /**
     * breeze's LBFGS.ApproximateInverseHessian times {@code g} (two-loop recursion, newest pair first),
     * negated: the L-BFGS direction, written at {@code out} in {@code s}.
     */
    final void twoLoop(final double[] s, final int gOff, final int out) {
        final int k = (int) s[PAIRS];
        double diag = 1.0;
        if (k > 0) {
            final double sy = pairSy(s, k - 1);
            final double yy = pairYy(s, k - 1);
            if (sy < 0 || Double.isNaN(sy)) {
                throw new SearchFailure("NaN history");
            }
            diag = sy / yy;
        }
        if (k == 0) {
            for (int j = 0; j < n; j++) {
                s[out + j] = -s[gOff + j]; // (g * 1.0) * -1.0, the same bits
            }
            return;
        }
        // The passes are fused (each axpy computes the next dot product on the fly, the copy, the scaling
        // by diag and the negation ride along), so each vector element sees the same operations in the
        // same order as in the unfused recursion (bit-identical), with about half the sweeps over n.
        final double[] as = new double[k];
        final double[] rho = new double[k];
        for (int i = 0; i < k; i++) {
            rho[i] = pairSy(s, k - 1 - i);
        }
        // first loop, newest pair first: q = g; a_i = s_i . q / rho_i; q -= a_i y_i
        int p = pairOff(s, k - 1);
        double dot = 0.0;
        for (int j = 0; j < n; j++) {
            final double q = s[gOff + j];
            s[out + j] = q;
            dot += s[p + j] * q;
        }
        for (int i = 0; i < k; i++) {
            as[i] = dot / rho[i];
            if (Double.isNaN(as[i])) {
                throw new SearchFailure("NaN history");
            }
            final double a = -as[i];
            final int y = p + n;
            dot = 0.0;
            if (i + 1 < k) {
                final int pn = pairOff(s, k - 2 - i);
                for (int j = 0; j < n; j++) {
                    final double q = s[out + j] + a * s[y + j];
                    s[out + j] = q;
                    dot += s[pn + j] * q;
                }
                p = pn;
            } else {
                // last pair: then q *= diag, and the second loop's first dot (y of the oldest pair)
                for (int j = 0; j < n; j++) {
                    final double q = (s[out + j] + a * s[y + j]) * diag;
                    s[out + j] = q;
                    dot += s[y + j] * q;
                }
            }
        }
        // second loop, oldest pair first: beta = y_i . q / rho_i; q += (a_i - beta) s_i; finally q = -q
        for (int i = k - 1; i >= 0; i--) {
            final int pi = pairOff(s, k - 1 - i);
            final double c = as[i] - dot / rho[i];
            dot = 0.0;
            if (i > 0) {
                final int yn = pairOff(s, k - i) + n;
                for (int j = 0; j < n; j++) {
                    final double q = s[out + j] + c * s[pi + j];
                    s[out + j] = q;
                    dot += s[yn + j] * q;
                }
            } else {
                for (int j = 0; j < n; j++) {
                    s[out + j] = (s[out + j] + c * s[pi + j]) * -1.0;
                }
            }
        }
    }

    /** Sets up breeze's StrongWolfeLineSearch.minimizeWithBound from the value and slope at step 0. */
    static void beginStrongWolfe(final double[] s, final double init, final double bound, final double f0,
                                 final double dd0) {
        s[LOW_T] = 0.0;
        s[LOW_DD] = dd0;
        s[LOW_F] = f0;
        s[LS_F0] = f0;
        s[LS_DD0] = dd0;
        if (dd0 > 0) {
            throw new SearchFailure("line search invoked with non-descent direction: " + dd0);
        }
        s[LS_STAGE] = 0;
        s[LS_I] = 0;
        s[LS_BOUND] = bound;
        s[ALPHA] = init;
    }

    private static final double WOLFE_C1 = 1e-4;
    private static final double WOLFE_C2 = 0.9;

    /** One step of the strong Wolfe search (Nocedal and Wright, with breeze's bound and NaN handling). */
    static int strongWolfeStep(final double[] s, final double fv, final double dd, final int maxZoom,
                               final int maxSearch) {
        final double t = s[ALPHA];
        final double f0 = s[LS_F0];
        final double dd0 = s[LS_DD0];
        if (s[LS_STAGE] == 0) {
            final int i = (int) s[LS_I];
            if (Double.isInfinite(fv) || Double.isNaN(fv)) {
                return nextTrial(s, t / 2.0, i + 1, maxSearch); // too long a step: halve it
            }
            if (fv > f0 + WOLFE_C1 * t * dd0 || (fv >= s[LOW_F] && i > 0)) {
                return beginZoom(s, s[LOW_T], s[LOW_DD], s[LOW_F], t, dd, fv, maxZoom);
            }
            if (Math.abs(dd) <= WOLFE_C2 * Math.abs(dd0)) {
                return ACCEPT_LAST;
            }
            if (dd >= 0) {
                return beginZoom(s, t, dd, fv, s[LOW_T], s[LOW_DD], s[LOW_F], maxZoom);
            }
            s[LOW_T] = t;
            s[LOW_DD] = dd;
            s[LOW_F] = fv;
            final double bound = s[LS_BOUND];
            if (t == bound) {
                return ACCEPT_LAST;
            }
            return nextTrial(s, Math.min(t * 1.5, bound), i + 1, maxSearch);
        }
        if (fv > f0 + WOLFE_C1 * t * dd0 || fv >= s[LOW_F]) {
            s[HI_T] = t;
            s[HI_DD] = dd;
            s[HI_F] = fv;
        } else {
            if (Math.abs(dd) <= WOLFE_C2 * Math.abs(dd0)) {
                return ACCEPT_LAST;
            }
            if (dd * (s[HI_T] - s[LOW_T]) >= 0) {
                s[HI_T] = s[LOW_T];
                s[HI_DD] = s[LOW_DD];
                s[HI_F] = s[LOW_F];
            }
            s[LOW_T] = t;
            s[LOW_DD] = dd;
            s[LOW_F] = fv;
        }
        s[LS_I] = s[LS_I] + 1;
        return zoomTrial(s, maxZoom);
    }

    private static int nextTrial(final double[] s, final double t, final int i, final int maxSearch) {
        if (i >= maxSearch) {
            throw new SearchFailure("line search failed");
        }
        s[LS_I] = i;
        s[ALPHA] = t;
        return CONTINUE;
    }

    private static int beginZoom(final double[] s, final double lt, final double ld, final double lf,
                                 final double ht, final double hd, final double hf, final int maxZoom) {
        s[LS_STAGE] = 1;
        s[LS_I] = 0;
        s[LOW_T] = lt;
        s[LOW_DD] = ld;
        s[LOW_F] = lf;
        s[HI_T] = ht;
        s[HI_DD] = hd;
        s[HI_F] = hf;
        return zoomTrial(s, maxZoom);
    }

    private static int zoomTrial(final double[] s, final int maxZoom) {
        if (s[LS_I] >= maxZoom) {
            throw new SearchFailure("line search zoom failed");
        }
        final double t = s[LOW_T] > s[HI_T]
                ? cubic(s[HI_T], s[HI_DD], s[HI_F], s[LOW_T], s[LOW_DD], s[LOW_F])
                : cubic(s[LOW_T], s[LOW_DD], s[LOW_F], s[HI_T], s[HI_DD], s[HI_F]);
        if (Double.isNaN(t)) {
            throw new SearchFailure("line search zoom failed"); // breeze evaluates at NaN first; the outcome is the same
        }
        s[ALPHA] = t;
        return CONTINUE;
    }

    /**
     * The minimizer of the cubic through (lt, lf, ld) and (rt, rf, rd) (lt < rt), kept within the middle
     * 80% of the interval (Nocedal and Wright, eq. 3.59, as breeze's CubicLineSearch.interp).
     */
    static double cubic(final double lt, final double ld, final double lf, final double rt, final double rd,
                        final double rf) {
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

    // ---------------------------------------------------------------- vector helpers (fixed order)

    static double dot(final double[] a, final int ao, final double[] b, final int bo, final int len) {
        double sum = 0.0;
        for (int i = 0; i < len; i++) {
            sum += a[ao + i] * b[bo + i];
        }
        return sum;
    }

    static double norm(final double[] a, final int ao, final int len) {
        return Math.sqrt(dot(a, ao, a, ao, len));
    }

    /** y += a * x. */
    static void axpy(final double a, final double[] x, final int xo, final double[] y, final int yo, final int len) {
        for (int i = 0; i < len; i++) {
            y[yo + i] += a * x[xo + i];
        }
    }
}

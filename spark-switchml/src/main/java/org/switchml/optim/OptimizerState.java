package org.switchml.optim;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The flyweight over a {@link QuasiNewton} state array: every field of the state by name, at the offsets
 * below, and the state's vectors as {@link Vector} views. Only this class indexes a state array.
 *
 * <p>Layout: a header, then vectors of length n.
 * <ul>
 *   <li>Fixed fields ({@code *_OFFSET}): the optimizer kind and dimension (to recognise the state), the
 *       machine's phase and counters, the value at x, the line search's registers, breeze's memory of the last
 *       {@value #VALUE_MEMORY} adjusted values, and the length of the objective history.</li>
 *   <li>Sized by the optimizer ({@link Layout}): the objective history, the position of the oldest curvature
 *       pair in the ring and the dot products {@code s.y}, {@code y.y} of each pair, then the optimizer's own
 *       registers ({@link #registers}).</li>
 *   <li>The vectors: x, grad, dir (and the pseudo-gradient for OWL-QN), then room for m curvature pairs
 *       {@code (s, y)}, kept as a ring ({@link CurvatureHistory}).</li>
 * </ul>
 * A state holds x only before its first evaluation ({@link #start}); the first evaluation makes room for
 * everything at once ({@link #growToMaxLength}); a reset of the history drops the pairs ({@link #dropPairs}).
 * These re-point the flyweight at a new array: views taken before then see the old one.
 */
final class OptimizerState {
    static final int KIND_OFFSET = 0;
    static final int DIMENSION_OFFSET = 1;
    static final int PHASE_OFFSET = 2;
    static final int ITERATIONS_OFFSET = 3;
    static final int VALUE_OFFSET = 4;
    static final int ADJUSTED_VALUE_OFFSET = 5;
    static final int INITIAL_ADJUSTED_VALUE_OFFSET = 6;
    static final int FAILED_ONCE_OFFSET = 7;
    static final int SEARCH_FAILED_OFFSET = 8;
    static final int REASON_OFFSET = 9;
    static final int PAIRS_OFFSET = 10;
    static final int EVALUATIONS_OFFSET = 11;
    /** The step of the pending point (SEARCH and ACCEPT phases). */
    static final int STEP_OFFSET = 12;

    static final int SEARCH_STAGE_OFFSET = 13;
    static final int SEARCH_TRIAL_OFFSET = 14;
    static final int STEP_BOUND_OFFSET = 15;
    static final int SEARCH_VALUE_OFFSET = 16;
    static final int SEARCH_SLOPE_OFFSET = 17;
    static final int LOW_STEP_OFFSET = 18;
    static final int LOW_SLOPE_OFFSET = 19;
    static final int LOW_VALUE_OFFSET = 20;
    static final int HIGH_STEP_OFFSET = 21;
    static final int HIGH_SLOPE_OFFSET = 22;
    static final int HIGH_VALUE_OFFSET = 23;
    // 24 and 25 are not used.
    static final int SHRINK_OFFSET = 26;
    static final int START_VALUE_OFFSET = 27;
    static final int THETA_OFFSET = 28;
    static final int VALUE_MEMORY_COUNT_OFFSET = 29;
    static final int VALUE_MEMORY_OFFSET = 30;
    /** How many adjusted values breeze's function-values check remembers (its default fvalMemory). */
    static final int VALUE_MEMORY = 20;

    static final int HISTORY_LENGTH_OFFSET = VALUE_MEMORY_OFFSET + VALUE_MEMORY;
    static final int HISTORY_OFFSET = HISTORY_LENGTH_OFFSET + 1;

    /** Where a machine is: about to evaluate x, searching along dir, re-evaluating the accepted step, or stopped. */
    enum Phase {
        START,
        SEARCH,
        ACCEPT,
        DONE;

        private static final Phase[] ALL = values();
    }

    /**
     * The sizes of one optimizer's states, and the offsets that follow from them.
     *
     * @param kind            which optimizer (a state carries it, so that another one's state is refused)
     * @param n               coefficients
     * @param m               curvature pairs kept
     * @param vectors         vectors of length n before the pairs (x, grad, dir[, pseudo-gradient])
     * @param historyCapacity entries the objective history can hold
     * @param registers       the optimizer's own header slots
     */
    record Layout(int kind, int n, int m, int vectors, int historyCapacity, int registers) implements Serializable {
        int ringOffset() {
            return HISTORY_OFFSET + historyCapacity;
        }

        int pairDotsOffset() {
            return ringOffset() + 1;
        }

        int registersOffset() {
            return pairDotsOffset() + 2 * m;
        }

        int headerLength() {
            return registersOffset() + registers;
        }

        int pairsOffset() {
            return headerLength() + vectors * n;
        }

        /** With every curvature pair stored. */
        long maxLength() {
            return (long) headerLength() + (vectors + 2L * m) * n;
        }
    }

    private final Layout layout;
    private double[] buffer;

    private OptimizerState(final Layout layout, final double[] buffer) {
        this.layout = layout;
        this.buffer = buffer;
    }

    /** The state {@code buffer} of an optimizer ({@code owner}, for the message) of {@code layout}, which it must be. */
    static OptimizerState wrap(final Layout layout, final double[] buffer, final String owner) {
        if (buffer == null
                || buffer.length < layout.headerLength() + layout.n()
                || buffer[KIND_OFFSET] != layout.kind()
                || buffer[DIMENSION_OFFSET] != layout.n()) {
            throw new IllegalArgumentException("not a state of this " + owner + " (n=" + layout.n() + ")");
        }
        return new OptimizerState(layout, buffer);
    }

    /** A new state holding x0 only, in the START phase. */
    static OptimizerState start(final Layout layout, final double[] x0) {
        final double[] s = new double[layout.headerLength() + layout.n()];
        s[KIND_OFFSET] = layout.kind();
        s[DIMENSION_OFFSET] = layout.n();
        s[PHASE_OFFSET] = Phase.START.ordinal();
        s[THETA_OFFSET] = 1.0;
        System.arraycopy(x0, 0, s, layout.headerLength(), layout.n());
        return new OptimizerState(layout, s);
    }

    /** The array this flyweight reads and writes now. */
    double[] buffer() {
        return buffer;
    }

    Layout layout() {
        return layout;
    }

    // ---------------------------------------------------------------- the array's extent

    /** Whether the array has room for every curvature pair. */
    boolean hasMaxLength() {
        return buffer.length >= layout.maxLength();
    }

    /** Re-points at a copy with room for every curvature pair (one allocation, rather than one per pair). */
    void growToMaxLength() {
        buffer = Arrays.copyOf(buffer, (int) layout.maxLength());
    }

    /** Re-points at a copy without the curvature pairs. */
    void dropPairs() {
        buffer = Arrays.copyOf(buffer, layout.pairsOffset());
    }

    /** The header and x only: enough for the answer, the history and the counters. */
    double[] headerAndX() {
        final int length = layout.headerLength() + layout.n();
        return buffer.length == length ? buffer : Arrays.copyOf(buffer, length);
    }

    // ---------------------------------------------------------------- the machine

    Phase phase() {
        return Phase.ALL[(int) buffer[PHASE_OFFSET]];
    }

    OptimizerState phase(final Phase phase) {
        buffer[PHASE_OFFSET] = phase.ordinal();
        return this;
    }

    /** breeze's {@code state.iter}: completed iterations. */
    int iterations() {
        return (int) buffer[ITERATIONS_OFFSET];
    }

    OptimizerState iterations(final int value) {
        buffer[ITERATIONS_OFFSET] = value;
        return this;
    }

    /** Evaluations received so far. */
    int evaluations() {
        return (int) buffer[EVALUATIONS_OFFSET];
    }

    OptimizerState evaluations(final int value) {
        buffer[EVALUATIONS_OFFSET] = value;
        return this;
    }

    /** The objective's value at x. */
    double value() {
        return buffer[VALUE_OFFSET];
    }

    OptimizerState value(final double value) {
        buffer[VALUE_OFFSET] = value;
        return this;
    }

    /** The adjusted value at x (objective plus L1 for OWL-QN). */
    double adjustedValue() {
        return buffer[ADJUSTED_VALUE_OFFSET];
    }

    OptimizerState adjustedValue(final double value) {
        buffer[ADJUSTED_VALUE_OFFSET] = value;
        return this;
    }

    /** The adjusted value at x0, which the function-values check is relative to. */
    double initialAdjustedValue() {
        return buffer[INITIAL_ADJUSTED_VALUE_OFFSET];
    }

    OptimizerState initialAdjustedValue(final double value) {
        buffer[INITIAL_ADJUSTED_VALUE_OFFSET] = value;
        return this;
    }

    /** Whether the last iteration failed (the next failure in a row stops the machine). */
    boolean failedOnce() {
        return buffer[FAILED_ONCE_OFFSET] != 0;
    }

    OptimizerState failedOnce(final boolean value) {
        buffer[FAILED_ONCE_OFFSET] = value ? 1 : 0;
        return this;
    }

    /** Whether the machine gave up after two failures in a row. */
    boolean searchFailed() {
        return buffer[SEARCH_FAILED_OFFSET] != 0;
    }

    OptimizerState searchFailed(final boolean value) {
        buffer[SEARCH_FAILED_OFFSET] = value ? 1 : 0;
        return this;
    }

    QuasiNewton.Reason reason() {
        return QuasiNewton.Reason.values()[(int) buffer[REASON_OFFSET]];
    }

    OptimizerState reason(final QuasiNewton.Reason reason) {
        buffer[REASON_OFFSET] = reason.ordinal();
        return this;
    }

    /** L-BFGS-B's theta, the scaling of its compact representation (1 without pairs). */
    double theta() {
        return buffer[THETA_OFFSET];
    }

    OptimizerState theta(final double value) {
        buffer[THETA_OFFSET] = value;
        return this;
    }

    // ---------------------------------------------------------------- the line search's registers

    /** The step of the pending point. */
    double step() {
        return buffer[STEP_OFFSET];
    }

    OptimizerState step(final double value) {
        buffer[STEP_OFFSET] = value;
        return this;
    }

    /** Strong Wolfe: 0 while bracketing, 1 while zooming. Backtracking: 0 before its first trial, then 1. */
    int searchStage() {
        return (int) buffer[SEARCH_STAGE_OFFSET];
    }

    OptimizerState searchStage(final int value) {
        buffer[SEARCH_STAGE_OFFSET] = value;
        return this;
    }

    /** Trials of the current stage so far. */
    int searchTrial() {
        return (int) buffer[SEARCH_TRIAL_OFFSET];
    }

    OptimizerState searchTrial(final int value) {
        buffer[SEARCH_TRIAL_OFFSET] = value;
        return this;
    }

    /** The largest step the search may take. */
    double stepBound() {
        return buffer[STEP_BOUND_OFFSET];
    }

    OptimizerState stepBound(final double value) {
        buffer[STEP_BOUND_OFFSET] = value;
        return this;
    }

    /** The search's value at step 0. */
    double searchValue() {
        return buffer[SEARCH_VALUE_OFFSET];
    }

    OptimizerState searchValue(final double value) {
        buffer[SEARCH_VALUE_OFFSET] = value;
        return this;
    }

    /** The search's slope at step 0. */
    double searchSlope() {
        return buffer[SEARCH_SLOPE_OFFSET];
    }

    OptimizerState searchSlope(final double value) {
        buffer[SEARCH_SLOPE_OFFSET] = value;
        return this;
    }

    /** The bracket's low end: step, slope and value. */
    double lowStep() {
        return buffer[LOW_STEP_OFFSET];
    }

    double lowSlope() {
        return buffer[LOW_SLOPE_OFFSET];
    }

    double lowValue() {
        return buffer[LOW_VALUE_OFFSET];
    }

    OptimizerState low(final double step, final double slope, final double value) {
        buffer[LOW_STEP_OFFSET] = step;
        buffer[LOW_SLOPE_OFFSET] = slope;
        buffer[LOW_VALUE_OFFSET] = value;
        return this;
    }

    /** The bracket's high end: step, slope and value. */
    double highStep() {
        return buffer[HIGH_STEP_OFFSET];
    }

    double highSlope() {
        return buffer[HIGH_SLOPE_OFFSET];
    }

    double highValue() {
        return buffer[HIGH_VALUE_OFFSET];
    }

    OptimizerState high(final double step, final double slope, final double value) {
        buffer[HIGH_STEP_OFFSET] = step;
        buffer[HIGH_SLOPE_OFFSET] = slope;
        buffer[HIGH_VALUE_OFFSET] = value;
        return this;
    }

    /** Backtracking: the factor a rejected step shrinks by. */
    double shrink() {
        return buffer[SHRINK_OFFSET];
    }

    OptimizerState shrink(final double value) {
        buffer[SHRINK_OFFSET] = value;
        return this;
    }

    /** Backtracking: the unregularized value at x, which breeze judges the first trial by. */
    double startValue() {
        return buffer[START_VALUE_OFFSET];
    }

    OptimizerState startValue(final double value) {
        buffer[START_VALUE_OFFSET] = value;
        return this;
    }

    // ---------------------------------------------------------------- remembered values and the history

    /** Forgets the remembered adjusted values but one, +infinity (breeze's initial memory). */
    OptimizerState resetValueMemory() {
        buffer[VALUE_MEMORY_COUNT_OFFSET] = 1;
        buffer[VALUE_MEMORY_OFFSET] = Double.POSITIVE_INFINITY;
        return this;
    }

    /** Remembers an adjusted value, forgetting the oldest of {@value #VALUE_MEMORY}. */
    OptimizerState rememberValue(final double v) {
        int count = (int) buffer[VALUE_MEMORY_COUNT_OFFSET];
        if (count == VALUE_MEMORY) {
            System.arraycopy(buffer, VALUE_MEMORY_OFFSET + 1, buffer, VALUE_MEMORY_OFFSET, VALUE_MEMORY - 1);
            count--;
        }
        buffer[VALUE_MEMORY_OFFSET + count] = v;
        buffer[VALUE_MEMORY_COUNT_OFFSET] = count + 1;
        return this;
    }

    /** Adjusted values remembered. */
    int rememberedValues() {
        return (int) buffer[VALUE_MEMORY_COUNT_OFFSET];
    }

    /** The largest remembered adjusted value. */
    double largestRememberedValue() {
        final int count = rememberedValues();
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, buffer[VALUE_MEMORY_OFFSET + i]);
        }
        return max;
    }

    /** Entries of the objective history. */
    int historyLength() {
        return (int) buffer[HISTORY_LENGTH_OFFSET];
    }

    /** Appends the adjusted value at x to the objective history. */
    OptimizerState appendHistory() {
        final int c = historyLength();
        if (c == layout.historyCapacity()) {
            throw new IllegalStateException("objective history overflow (" + c + " entries)");
        }
        buffer[HISTORY_OFFSET + c] = adjustedValue();
        buffer[HISTORY_LENGTH_OFFSET] = c + 1;
        return this;
    }

    /** The objective history (a copy). */
    double[] history() {
        return Arrays.copyOfRange(buffer, HISTORY_OFFSET, HISTORY_OFFSET + historyLength());
    }

    // ---------------------------------------------------------------- the curvature pairs' bookkeeping

    /** Curvature pairs stored. */
    int pairs() {
        return (int) buffer[PAIRS_OFFSET];
    }

    OptimizerState pairs(final int value) {
        buffer[PAIRS_OFFSET] = value;
        return this;
    }

    /** Ring slot of the oldest pair. */
    int ringStart() {
        return (int) buffer[layout.ringOffset()];
    }

    OptimizerState ringStart(final int slot) {
        buffer[layout.ringOffset()] = slot;
        return this;
    }

    /** {@code s.y} of the pair in ring slot {@code slot}. */
    double pairSy(final int slot) {
        return buffer[layout.pairDotsOffset() + 2 * slot];
    }

    /** {@code y.y} of the pair in ring slot {@code slot}. */
    double pairYy(final int slot) {
        return buffer[layout.pairDotsOffset() + 2 * slot + 1];
    }

    OptimizerState pairDots(final int slot, final double sy, final double yy) {
        buffer[layout.pairDotsOffset() + 2 * slot] = sy;
        buffer[layout.pairDotsOffset() + 2 * slot + 1] = yy;
        return this;
    }

    // ---------------------------------------------------------------- views

    /** The optimizer's own header slots. */
    Vector registers() {
        return new Vector(buffer, layout.registersOffset(), layout.registers());
    }

    /** The current iterate. */
    Vector x() {
        return vector(0);
    }

    /** The objective's gradient at x. */
    Vector grad() {
        return vector(1);
    }

    /** The search direction. */
    Vector dir() {
        return vector(2);
    }

    /** OWL-QN's pseudo-gradient at x. */
    Vector pseudoGradient() {
        if (layout.vectors() < 4) {
            throw new IllegalStateException("this optimizer keeps no pseudo-gradient");
        }
        return vector(3);
    }

    private Vector vector(final int i) {
        return new Vector(buffer, layout.headerLength() + i * layout.n(), layout.n());
    }

    /** s of the pair in ring slot {@code slot}. */
    Vector pairS(final int slot) {
        return new Vector(buffer, layout.pairsOffset() + 2 * slot * layout.n(), layout.n());
    }

    /** y of the pair in ring slot {@code slot}. */
    Vector pairY(final int slot) {
        return new Vector(buffer, layout.pairsOffset() + (2 * slot + 1) * layout.n(), layout.n());
    }

    /**
     * A run of an array's doubles: one vector or a group of registers of a state (or a plain array, where a
     * sweep takes both). Sums run in index order, so that every worker adds the same terms in the same order.
     */
    static final class Vector {
        private final double[] a;
        private final int offset;
        private final int length;

        Vector(final double[] a, final int offset, final int length) {
            this.a = a;
            this.offset = offset;
            this.length = length;
        }

        int length() {
            return length;
        }

        double get(final int i) {
            return a[offset + i];
        }

        void set(final int i, final double v) {
            a[offset + i] = v;
        }

        void copyFrom(final double[] src) {
            System.arraycopy(src, 0, a, offset, length);
        }

        void copyFrom(final double[] src, final int from, final int count) {
            System.arraycopy(src, from, a, offset, count);
        }

        void copyTo(final double[] dst) {
            System.arraycopy(a, offset, dst, 0, length);
        }

        double[] copy() {
            return Arrays.copyOfRange(a, offset, offset + length);
        }

        /** The sum of {@code this[i] * other[i]}, in index order. */
        double dot(final Vector other) {
            final double[] b = other.a;
            final int bo = other.offset;
            double sum = 0.0;
            for (int i = 0; i < length; i++) {
                sum += a[offset + i] * b[bo + i];
            }
            return sum;
        }

        /** The sum of {@code this[i] * other[i]}, in index order. */
        double dot(final double[] other) {
            double sum = 0.0;
            for (int i = 0; i < length; i++) {
                sum += a[offset + i] * other[i];
            }
            return sum;
        }

        double norm() {
            return Math.sqrt(dot(this));
        }

        // Fused sweeps for the hot loops: each reads its arrays once per element and keeps them in locals.

        /** {@code this = -src}. */
        void negate(final Vector src) {
            final double[] s = src.a;
            final int so = src.offset;
            for (int i = 0; i < length; i++) {
                a[offset + i] = -s[so + i];
            }
        }

        /** {@code this = src}; returns {@code with . this}. */
        double copyDot(final Vector src, final Vector with) {
            final double[] s = src.a;
            final int so = src.offset;
            final double[] w = with.a;
            final int wo = with.offset;
            double dot = 0.0;
            for (int i = 0; i < length; i++) {
                final double q = s[so + i];
                a[offset + i] = q;
                dot += w[wo + i] * q;
            }
            return dot;
        }

        /** {@code this += c x}; returns {@code with . this}. */
        double axpyDot(final double c, final Vector x, final Vector with) {
            final double[] xa = x.a;
            final int xo = x.offset;
            final double[] w = with.a;
            final int wo = with.offset;
            double dot = 0.0;
            for (int i = 0; i < length; i++) {
                final double q = a[offset + i] + c * xa[xo + i];
                a[offset + i] = q;
                dot += w[wo + i] * q;
            }
            return dot;
        }

        /** {@code this = (this + c x) * scale}; returns {@code with . this}. */
        double axpyScaleDot(final double c, final Vector x, final double scale, final Vector with) {
            final double[] xa = x.a;
            final int xo = x.offset;
            final double[] w = with.a;
            final int wo = with.offset;
            double dot = 0.0;
            for (int i = 0; i < length; i++) {
                final double q = (a[offset + i] + c * xa[xo + i]) * scale;
                a[offset + i] = q;
                dot += w[wo + i] * q;
            }
            return dot;
        }

        /** {@code this = (this + c x) * scale}. */
        void axpyScale(final double c, final Vector x, final double scale) {
            final double[] xa = x.a;
            final int xo = x.offset;
            for (int i = 0; i < length; i++) {
                a[offset + i] = (a[offset + i] + c * xa[xo + i]) * scale;
            }
        }

        /**
         * {@code this = next - from} and {@code y = nextY - fromY}, and their dot products into {@code dots}:
         * {@code [this . y, y . y]}.
         */
        void differences(
                final double[] next,
                final Vector from,
                final Vector y,
                final double[] nextY,
                final Vector fromY,
                final double[] dots) {
            final double[] f = from.a;
            final int fo = from.offset;
            final double[] ya = y.a;
            final int yo = y.offset;
            final double[] fy = fromY.a;
            final int fyo = fromY.offset;
            double sy = 0.0;
            double yy = 0.0;
            for (int i = 0; i < length; i++) {
                final double sv = next[i] - f[fo + i];
                final double yv = nextY[i] - fy[fyo + i];
                a[offset + i] = sv;
                ya[yo + i] = yv;
                sy += sv * yv;
                yy += yv * yv;
            }
            dots[0] = sy;
            dots[1] = yy;
        }
    }
}

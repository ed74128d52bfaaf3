package org.switchml.spark.ml.classification;

import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.ml.optim.QuasiNewton;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The fit as a {@link ReplicatedLoop.Body}: the loop's state is the optimizer's state; each loop
 * iteration is one evaluation of the objective. A task's contribution is its batches' gradient sum,
 * loss sum and weight sum at the optimizer's pending point (one allreduce), and the update hands the
 * summed objective to the optimizer, which names the next point or stops.
 *
 * <p>Scalars reported per loop iteration, after the update: {@code [optimizer iterations, adjusted
 * objective, adjusted gradient norm, evaluations, clock, objective history length, the value just
 * evaluated, ms of the contribution of the task that ran the update, ms of the update]}; the clock
 * (milliseconds, the reporting task's {@code System.nanoTime}) and the two times are for timing only and
 * never enter the state; the value is +infinity when a partition flagged a non-finite loss or
 * gradient.
 */
final class LogisticFit implements ReplicatedLoop.Body<InstanceBatch> {
    private static final long serialVersionUID = 1L;

    private final LogisticObjective objective;
    private final QuasiNewton optimizer;

    LogisticFit(final LogisticObjective objective, final QuasiNewton optimizer) {
        if (objective.dim() != optimizer.dimension()) {
            throw new IllegalArgumentException("objective has " + objective.dim() + " coefficients, optimizer "
                    + optimizer.dimension());
        }
        this.objective = objective;
        this.optimizer = optimizer;
    }

    /** Indices of the scalars. */
    static final int ITERATIONS = 0;
    static final int LOSS = 1;
    static final int GRADIENT_NORM = 2;
    static final int EVALUATIONS = 3;
    static final int CLOCK = 4;
    static final int HISTORY = 5;
    static final int EVALUATED = 6;
    static final int COMPUTE_MS = 7;
    static final int UPDATE_MS = 8;

    /** Time of this task's last contribution (a profile; never enters the state). */
    private transient double contributionMs;

    /**
     * The pending point of one state and what the evaluation there needs ({@link LogisticObjective.Prepared}),
     * computed by the first of an executor's tasks to ask and shared by the others and by the update: the
     * loop hands all tasks of an executor the same state array, and the update changes it only after they
     * have all contributed. With 10^7 coefficients this saves each further task two sweeps and two 80 MB
     * arrays per evaluation, and the update one of each. An entry is used only for the very state array
     * (identity) and evaluation count it was computed for.
     */
    private static final class Pending {
        private final double[] state;
        private final double evaluations;
        private double[] point;
        private LogisticObjective.Prepared prepared;

        Pending(final double[] state, final double evaluations) {
            this.state = state;
            this.evaluations = evaluations;
        }
    }

    /**
     * One pending point per fit (by {@link #fitId}) per JVM; the update removes it. Bounded, in case a
     * stage dies between a contribution and its update.
     */
    private static final Map<Long, Pending> PENDING = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<Long, Pending> eldest) {
            return size() > 8;
        }
    };

    /**
     * Per fit (by {@link #fitId}) per JVM: the coefficient-sized arrays an evaluation needs, kept from one
     * evaluation to the next while a stage of the loop runs (the pending point and the effective coefficients
     * of the last evaluation, once its update has consumed them, and the gradient). With 10^7 coefficients
     * each is an 80 MB array that would otherwise be new garbage per evaluation, and the collector's work
     * for them takes CPU from the fit. Dropped when the stage ends ({@link #stageEnded}); bounded like
     * {@link #PENDING}.
     */
    private static final Map<Long, Workspace> WORKSPACES = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<Long, Workspace> eldest) {
            return size() > 8;
        }
    };

    /** See {@link #WORKSPACES}. An array is either here or in use by one evaluation, never both. */
    private static final class Workspace {
        private double[] point;
        private double[] effective;
        private double[] grad;

        /** The point array to fill ({@code n} elements), taken out. */
        synchronized double[] takePoint(final int n) {
            final double[] p = point != null ? point : new double[n];
            point = null;
            return p;
        }

        /** The effective-coefficients array, or null (then {@code prepare} makes one), taken out. */
        synchronized double[] takeEffective() {
            final double[] e = effective;
            effective = null;
            return e;
        }

        /** The gradient array to fill ({@code n} elements), taken out. */
        synchronized double[] takeGrad(final int n) {
            final double[] g = grad != null ? grad : new double[n];
            grad = null;
            return g;
        }

        /** Hands back what an evaluation used, once nothing reads it any more. */
        synchronized void giveBack(final double[] point, final double[] effective, final double[] grad) {
            this.point = point;
            this.effective = effective;
            this.grad = grad;
        }
    }

    /** Names this fit's entries in {@link #PENDING} and {@link #WORKSPACES} on every executor. */
    private final long fitId = ThreadLocalRandom.current().nextLong();

    private Workspace workspace() {
        synchronized (WORKSPACES) {
            return WORKSPACES.computeIfAbsent(fitId, id -> new Workspace());
        }
    }

    private Pending pending(final double[] state) {
        final double evaluations = optimizer.evaluations(state);
        Pending p;
        synchronized (PENDING) {
            p = PENDING.get(fitId);
            if (p == null || p.state != state || p.evaluations != evaluations) {
                p = new Pending(state, evaluations);
                PENDING.put(fitId, p);
            }
        }
        synchronized (p) {
            if (p.point == null) {
                final Workspace w = workspace();
                final double[] point = w.takePoint(optimizer.dimension());
                optimizer.pendingPoint(state, point);
                p.prepared = objective.prepare(point, w.takeEffective());
                p.point = point;
            }
        }
        return p;
    }

    @Override
    public double[] contribution(final List<InstanceBatch> partition, final double[] state, final int iteration) {
        return contribution(partition, state, iteration, null);
    }

    @Override
    public double[] contribution(final List<InstanceBatch> partition, final double[] state, final int iteration,
                                 final double[] spare) {
        final long t0 = System.nanoTime();
        final double[] v = objective.contribution(partition, pending(state).prepared, spare);
        contributionMs = (System.nanoTime() - t0) / 1e6;
        return v;
    }

    @Override
    public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
        final long t0 = System.nanoTime();
        final Pending pending = pending(state);
        final double[] point = pending.point;
        synchronized (PENDING) {
            PENDING.remove(fitId);
        }
        final Workspace w = workspace();
        final double[] grad = w.takeGrad(objective.dim());
        final double value = objective.valueAndGradient(sum, point, grad);
        // In place: the loop runs this once per executor, after all of the executor's tasks have
        // contributed, and then hands every task the new state; the old one is not used again. With 10^7
        // coefficients a copy would be 1.9 GB per evaluation.
        final double[] next = optimizer.receiveInPlace(state, value, grad, point);
        // The optimizer copied what it keeps of point and grad; all of this executor's tasks contributed at
        // the point, so nothing reads these arrays until the next evaluation takes them back.
        w.giveBack(point, pending.prepared.effective, grad);
        final boolean done = optimizer.done(next);
        final double[] scalars = {optimizer.iterations(next), optimizer.adjustedValue(next),
            optimizer.adjustedGradientNorm(next), optimizer.evaluations(next), System.nanoTime() / 1e6,
            optimizer.objectiveHistoryLength(next), value, contributionMs, 0};
        scalars[UPDATE_MS] = (System.nanoTime() - t0) / 1e6;
        // The driver needs only x and the history of a finished fit, not the curvature pairs.
        return new ReplicatedLoop.Step(done ? optimizer.finalState(next) : next, scalars, done);
    }

    @Override
    public void stageEnded() {
        synchronized (PENDING) {
            PENDING.remove(fitId);
        }
        synchronized (WORKSPACES) {
            WORKSPACES.remove(fitId);
        }
    }

    /**
     * An upper bound on evaluations for {@code maxIter} iterations (two line searches per iteration at
     * most: a failed one and its retry): the loop's iteration cap; convergence ends it long before.
     */
    static int maxEvaluations(final int maxIter, final int perSearch) {
        final long bound = 2L + 2L * (maxIter + 1L) * perSearch;
        return (int) Math.min(Integer.MAX_VALUE - 1, bound);
    }
}

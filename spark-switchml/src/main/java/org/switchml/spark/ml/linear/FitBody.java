package org.switchml.spark.ml.linear;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.spark.TaskContext;
import org.apache.spark.util.TaskCompletionListener;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ReplicatedLoop;

/**
 * A fit as a {@link ReplicatedLoop.Body}, for any estimator's {@link LinearObjective}: the loop's state is the
 * optimizer's state; each loop iteration is one evaluation of the objective. A task's contribution is its
 * batches' gradient sum, loss sum and weight sum at the optimizer's pending point (one allreduce), and the
 * update hands the summed objective to the optimizer, which names the next point or stops.
 *
 * <p>Scalars reported per loop iteration, after the update: {@code [optimizer iterations, adjusted
 * objective, adjusted gradient norm, evaluations, clock, objective history length, the value just
 * evaluated, ms of the contribution of the task that ran the update, ms of the update]}; the clock
 * (milliseconds, the reporting task's {@code System.nanoTime}) and the two times are for timing only and
 * never enter the state; the value is +infinity when a partition flagged a non-finite loss or
 * gradient.
 */
final class FitBody implements ReplicatedLoop.Body<InstanceBatch> {
    private static final long serialVersionUID = 1L;

    private final LinearObjective objective;
    private final QuasiNewton optimizer;

    FitBody(final LinearObjective objective, final QuasiNewton optimizer) {
        if (objective.dim() != optimizer.dimension()) {
            throw new IllegalArgumentException(
                    "objective has " + objective.dim() + " coefficients, optimizer " + optimizer.dimension());
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

    /**
     * Time of this task's contributions to the last evaluation (a profile; never enters the state): with exact sums a
     * task contributes once per source partition it read.
     */
    private transient double contributionMs;
    /** The evaluation {@link #contributionMs} is of. */
    private transient int contributionIteration = -1;

    /** Names this fit's {@link EvaluationCache} in every JVM. */
    private final long fitId = ThreadLocalRandom.current().nextLong();

    /** This copy's lease on the fit's cache in this JVM, from its first evaluation to its stage's end. */
    private transient EvaluationCache.Lease lease;

    /**
     * The fit's cache in this JVM, taking a lease on it at this copy's first evaluation; inside a task the
     * lease is also closed when the task completes (the driver's fallback loop evaluates in tasks that
     * never see {@link #stageEnded}).
     */
    private synchronized EvaluationCache cache() {
        if (lease == null) {
            final EvaluationCache.Lease l = EvaluationCache.lease(fitId);
            lease = l;
            final TaskContext task = TaskContext.get();
            if (task != null) {
                task.addTaskCompletionListener((TaskCompletionListener) context -> l.close());
            }
        }
        return lease.cache();
    }

    /** The pending point of {@code state}, computed by the first of this JVM's tasks to ask. */
    private EvaluationCache.Pending pending(final EvaluationCache cache, final double[] state) {
        final EvaluationCache.Pending p = cache.pending(state, optimizer.evaluations(state));
        synchronized (p) {
            if (p.point == null) {
                final EvaluationCache.Workspace w = cache.workspace();
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
    public double[] contribution(
            final List<InstanceBatch> partition, final double[] state, final int iteration, final double[] spare) {
        final long t0 = System.nanoTime();
        final double[] v = objective.contribution(partition, pending(cache(), state).prepared, spare);
        final double ms = (System.nanoTime() - t0) / 1e6;
        contributionMs = iteration == contributionIteration ? contributionMs + ms : ms;
        contributionIteration = iteration;
        return v;
    }

    @Override
    public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
        final long t0 = System.nanoTime();
        final EvaluationCache cache = cache();
        final EvaluationCache.Pending pending = pending(cache, state);
        final double[] point = pending.point;
        cache.dropPending();
        final EvaluationCache.Workspace w = cache.workspace();
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
        final double[] scalars = {
            optimizer.iterations(next),
            optimizer.adjustedValue(next),
            optimizer.adjustedGradientNorm(next),
            optimizer.evaluations(next),
            System.nanoTime() / 1e6,
            optimizer.objectiveHistoryLength(next),
            value,
            contributionMs,
            0
        };
        scalars[UPDATE_MS] = (System.nanoTime() - t0) / 1e6;
        // The driver needs only x and the history of a finished fit, not the curvature pairs.
        return new ReplicatedLoop.Step(done ? optimizer.finalState(next) : next, scalars, done);
    }

    /** Closes this copy's lease: the last one closed in a JVM frees the fit's cache there. */
    @Override
    public synchronized void stageEnded() {
        if (lease != null) {
            lease.close();
            lease = null;
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

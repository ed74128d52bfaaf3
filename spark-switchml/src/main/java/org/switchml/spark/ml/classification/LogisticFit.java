package org.switchml.spark.ml.classification;

import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.ml.optim.QuasiNewton;

import java.util.List;

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

    @Override
    public double[] contribution(final List<InstanceBatch> partition, final double[] state, final int iteration) {
        final long t0 = System.nanoTime();
        final double[] v = objective.contribution(partition, optimizer.pendingPoint(state));
        contributionMs = (System.nanoTime() - t0) / 1e6;
        return v;
    }

    @Override
    public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
        final long t0 = System.nanoTime();
        final double[] point = optimizer.pendingPoint(state);
        final double[] grad = new double[objective.dim()];
        final double value = objective.valueAndGradient(sum, point, grad);
        // In place: the loop runs this once per executor, after all of the executor's tasks have
        // contributed, and then hands every task the new state; the old one is not used again. With 10^7
        // coefficients a copy would be 1.9 GB per evaluation.
        final double[] next = optimizer.receiveInPlace(state, value, grad);
        final boolean done = optimizer.done(next);
        final double[] scalars = {optimizer.iterations(next), optimizer.adjustedValue(next),
            optimizer.adjustedGradientNorm(next), optimizer.evaluations(next), System.nanoTime() / 1e6,
            optimizer.objectiveHistoryLength(next), value, contributionMs, 0};
        scalars[UPDATE_MS] = (System.nanoTime() - t0) / 1e6;
        // The driver needs only x and the history of a finished fit, not the curvature pairs.
        return new ReplicatedLoop.Step(done ? optimizer.finalState(next) : next, scalars, done);
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

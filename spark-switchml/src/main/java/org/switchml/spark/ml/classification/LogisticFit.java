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
 * <p>Scalars reported per loop iteration: {@code [optimizer iteration, adjusted objective, adjusted
 * gradient norm, evaluations, clock]} after the update; the clock (milliseconds, the reporting task's
 * {@code System.nanoTime}) is for timing only and never enters the state.
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

    /** Index of the clock among the scalars. */
    static final int CLOCK = 4;

    @Override
    public double[] contribution(final List<InstanceBatch> partition, final double[] state, final int iteration) {
        return objective.contribution(partition, optimizer.pendingPoint(state));
    }

    @Override
    public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
        final double[] point = optimizer.pendingPoint(state);
        final double[] grad = new double[objective.dim()];
        final double value = objective.valueAndGradient(sum, point, grad);
        final double[] next = optimizer.receive(state, value, grad);
        final boolean done = optimizer.done(next);
        final double[] scalars = {optimizer.iterations(next), optimizer.adjustedValue(next),
            optimizer.adjustedGradientNorm(next), optimizer.evaluations(next), System.nanoTime() / 1e6};
        return new ReplicatedLoop.Step(next, scalars, done);
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

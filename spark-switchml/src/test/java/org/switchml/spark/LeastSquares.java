package org.switchml.spark;

import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.TaskContext;

/**
 * Gradient descent on least squares, as a {@link ReplicatedLoop.Body}: records are {@code [x..., y]}.
 * The contribution is {@code [Σ (w·x − y) x, Σ ½(w·x − y)², count]}; the update is deterministic.
 * Optionally fails task 1 of a barrier stage's first attempt at one iteration (fault injection).
 */
final class LeastSquares implements ReplicatedLoop.Body<double[]> {
    private static final long serialVersionUID = 1L;
    private final int dim;
    private final double rate;
    private final int failAtIteration;

    LeastSquares(final int dim, final double rate, final int failAtIteration) {
        this.dim = dim;
        this.rate = rate;
        this.failAtIteration = failAtIteration;
    }

    int vectorLength() {
        return dim + 2;
    }

    @Override
    public double[] contribution(final List<double[]> partition, final double[] w, final int iteration) {
        final TaskContext ctx = TaskContext.get();
        if (iteration == failAtIteration
                && ctx instanceof BarrierTaskContext
                && "0".equals(ctx.getLocalProperty(SwitchMLAggregator.ATTEMPT_PROPERTY))
                && ctx.partitionId() == 1) {
            // The other tasks have already sent this iteration's vector: they are mid-allreduce.
            throw new IllegalStateException("injected failure at iteration " + iteration);
        }
        final double[] g = new double[dim + 2];
        for (final double[] r : partition) {
            double m = -r[dim];
            for (int i = 0; i < dim; i++) {
                m += w[i] * r[i];
            }
            for (int i = 0; i < dim; i++) {
                g[i] += m * r[i];
            }
            g[dim] += 0.5 * m * m;
            g[dim + 1] += 1;
        }
        return g;
    }

    @Override
    public ReplicatedLoop.Step update(final double[] w, final double[] sum, final int iteration) {
        final double n = sum[dim + 1];
        final double[] next = new double[dim];
        for (int i = 0; i < dim; i++) {
            next[i] = w[i] - rate * sum[i] / n;
        }
        return new ReplicatedLoop.Step(next, new double[] {sum[dim] / n}, false);
    }
}

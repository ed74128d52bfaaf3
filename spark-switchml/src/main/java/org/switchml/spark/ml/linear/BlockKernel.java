package org.switchml.spark.ml.linear;

import java.io.Serializable;

/**
 * One loss's arithmetic over one layout of rows, as MLlib's block aggregators' {@code add(block)}: adds a
 * block's rows to a partition's sums at a prepared point. A kernel computes margins from the effective
 * coefficients, turns them into the rows' losses and multipliers, and adds {@code x_r * mult_r} to the gradient
 * sum; the objective does the rest (standardization, centering, the mean, the penalty) once per partition.
 *
 * <p>Kernels: {@link BinaryDenseKernel} and {@link BinarySparseKernel} for any loss of one margin per row
 * ({@link MarginLoss}: the logistic loss, and the hinge or squared loss of another estimator);
 * {@link MultinomialDenseKernel} and {@link MultinomialSparseKernel} for the softmax.
 *
 * @param <B> the block: a dense {@link InstanceBatch} or a {@link ColumnBlock} of sparse ones
 */
interface BlockKernel<B> extends Serializable {
    /** Adds the rows of {@code block} to {@code sums} at the point {@code p} was prepared for. */
    void add(B block, PreparedPoint p, BlockSums sums);
}

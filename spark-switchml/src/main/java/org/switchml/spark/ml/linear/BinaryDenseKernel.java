package org.switchml.spark.ml.linear;

import java.util.Arrays;

/**
 * A dense batch under a loss of one margin per row, through BLAS: the margins {@code X w} (one GEMV), then
 * {@code X^T multipliers} into the gradient sum (another, skipped when every multiplier is 0). The result is
 * summed with the other partitions', so it needs no bit-for-bit reproducibility across machines; only the
 * update after the allreduce does.
 */
final class BinaryDenseKernel implements BlockKernel<InstanceBatch> {
    private static final long serialVersionUID = 1L;
    /** BLAS for the dense batches (the JDK's Vector API, or native, as MLlib's own aggregators get). */
    private static final dev.ludovic.netlib.blas.BLAS BLAS = dev.ludovic.netlib.blas.BLAS.getInstance();

    private final MarginLoss loss;

    BinaryDenseKernel(final MarginLoss loss) {
        this.loss = loss;
    }

    @Override
    public void add(final InstanceBatch b, final PreparedPoint p, final BlockSums sums) {
        final int f = b.numFeatures;
        final int rows = b.rows;
        final double[] m = new double[rows];
        Arrays.fill(m, p.offset[0]);
        BLAS.dgemv("T", f, rows, 1.0, b.values, f, p.effective, 1, 1.0, m, 1);
        if (loss.multipliers(b, m, 0, sums)) {
            BLAS.dgemv("N", f, rows, 1.0, b.values, f, m, 1, 1.0, sums.gradient, 1);
        }
    }
}

package org.switchml.spark.ml.linear;

/**
 * A dense batch under the softmax, through BLAS, with the coefficients and the gradient sum as F x K
 * column-major matrices ({@code c * F + j}: {@link PreparedPoint#transposed}, {@link
 * BlockSums#transposedGradient}) and the rows a F x R column-major one: the margins (K x R, each row's K classes
 * contiguous) are {@code coef^T rows} (one GEMM of dot products along the features), and the gradient
 * {@code += rows x multipliers^T} (another, streaming along the features). Both run about twice as fast
 * through the Java BLAS as the K x F layout, whose inner loops run over the K = 10 classes.
 */
final class MultinomialDenseKernel implements BlockKernel<InstanceBatch> {
    private static final long serialVersionUID = 1L;
    private static final dev.ludovic.netlib.blas.BLAS BLAS = dev.ludovic.netlib.blas.BLAS.getInstance();

    @Override
    public void add(final InstanceBatch b, final PreparedPoint p, final BlockSums sums) {
        final int f = b.numFeatures;
        final int k = p.offset.length;
        final int rows = b.rows;
        final double[] m = new double[rows * k];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(p.offset, 0, m, r * k, k);
        }
        BLAS.dgemm("T", "N", k, rows, f, 1.0, p.transposed(), f, b.values, f, 1.0, m, k);
        SoftmaxLoss.multipliers(b, m, 0, k, sums);
        BLAS.dgemm("N", "T", f, k, rows, 1.0, b.values, f, m, k, 1.0, sums.transposedGradient(f, k), f);
    }
}

package org.switchml.spark.ml.linear;

/**
 * A column block of sparse rows under the softmax: as {@link BinarySparseKernel}, with K margins per row
 * (row r's at {@code m[r * K ..]}).
 */
final class MultinomialSparseKernel implements BlockKernel<ColumnBlock> {
    private static final long serialVersionUID = 1L;

    @Override
    public void add(final ColumnBlock block, final PreparedPoint p, final BlockSums sums) {
        final int k = p.offset.length;
        final double[] m = ColumnBlock.margins(block.rows * k);
        for (int r = 0; r < block.rows; r++) {
            System.arraycopy(p.offset, 0, m, r * k, k);
        }
        block.addMargins(p.effective, k, m);
        int g = 0;
        for (final InstanceBatch b : block.batches) {
            SoftmaxLoss.multipliers(b, m, g, k, sums);
            g += b.rows;
        }
        block.addGradient(m, k, sums.gradient);
    }
}

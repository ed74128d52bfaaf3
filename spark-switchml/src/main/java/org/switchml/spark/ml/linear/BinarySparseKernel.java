package org.switchml.spark.ml.linear;

import java.util.Arrays;

/**
 * A column block of sparse rows under a loss of one margin per row: margins by column
 * ({@link ColumnBlock#addMargins}), then each row's multiplier (the loss and the sums batch by batch, in row
 * order), then the gradient by column ({@link ColumnBlock#addGradient}). Rows of weight 0 and rows whose
 * multiplier is 0 add {@code ±0} terms, which leave every sum's bits as if they were skipped.
 */
final class BinarySparseKernel implements BlockKernel<ColumnBlock> {
    private static final long serialVersionUID = 1L;

    private final MarginLoss loss;

    BinarySparseKernel(final MarginLoss loss) {
        this.loss = loss;
    }

    @Override
    public void add(final ColumnBlock block, final PreparedPoint p, final BlockSums sums) {
        final double[] m = ColumnBlock.margins(block.rows);
        Arrays.fill(m, 0, block.rows, p.offset[0]);
        block.addMargins(p.effective, 1, m);
        int g = 0;
        for (final InstanceBatch b : block.batches) {
            loss.multipliers(b, m, g, sums);
            g += b.rows;
        }
        block.addGradient(m, 1, sums.gradient);
    }
}

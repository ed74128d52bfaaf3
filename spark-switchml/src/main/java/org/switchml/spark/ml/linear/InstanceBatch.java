package org.switchml.spark.ml.linear;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A block of training rows as they come (unscaled: the loss applies 1/std through the coefficients), as
 * MLlib's {@code InstanceBlock}: labels, weights, and the features either dense (row-major) or
 * compressed by row. Explicit zeros are dropped.
 */
public final class InstanceBatch implements Serializable {
    private static final long serialVersionUID = 1L;

    final int rows;
    final int numFeatures;
    final double[] labels;
    final double[] weights;
    /** Dense: rows x numFeatures row-major, with {@link #indices} null. Sparse: the non-zero values. */
    final double[] values;
    /** Sparse only: column of each value. */
    final int[] indices;
    /** Sparse only: row r spans [rowStart[r], rowStart[r + 1]). */
    final int[] rowStart;
    /** The sparse kernels' by-column copy of the block this batch starts, made on first use (not cached bytes). */
    transient volatile ColumnBlock columnBlock;

    private InstanceBatch(
            final int rows,
            final int numFeatures,
            final double[] labels,
            final double[] weights,
            final double[] values,
            final int[] indices,
            final int[] rowStart) {
        this.rows = rows;
        this.numFeatures = numFeatures;
        this.labels = labels;
        this.weights = weights;
        this.values = values;
        this.indices = indices;
        this.rowStart = rowStart;
    }

    /** Rows in the batch. */
    public int size() {
        return rows;
    }

    /** Features per row. */
    public int numFeatures() {
        return numFeatures;
    }

    /** Label of row r. */
    public double label(final int r) {
        return labels[r];
    }

    /** Weight of row r. */
    public double weight(final int r) {
        return weights[r];
    }

    /** Collects rows into batches. */
    public static final class Builder {
        private final int numFeatures;
        private final int maxRows;
        private int rows;
        private int nnz;
        private double[] labels;
        private double[] weights;
        private double[] values;
        private int[] indices;
        private int[] rowStart;

        /**
         * @param numFeatures features per row
         * @param maxRows     rows per batch
         */
        public Builder(final int numFeatures, final int maxRows) {
            if (maxRows <= 0) {
                throw new IllegalArgumentException("maxRows must be > 0: " + maxRows);
            }
            this.numFeatures = numFeatures;
            this.maxRows = maxRows;
            reset();
        }

        private void reset() {
            rows = 0;
            nnz = 0;
            final int cap = Math.min(maxRows, 64);
            labels = new double[cap];
            weights = new double[cap];
            values = new double[cap * 4];
            indices = new int[cap * 4];
            rowStart = new int[cap + 1];
        }

        /** Whether the current batch is full. */
        public boolean full() {
            return rows >= maxRows;
        }

        /** Rows in the current batch. */
        public int rows() {
            return rows;
        }

        /**
         * Adds a row given by its non-zero entries ({@code idx} ascending, {@code len} of them).
         */
        public void add(final double label, final double weight, final int[] idx, final double[] val, final int len) {
            if (rows == labels.length) {
                final int cap = Math.min(maxRows, labels.length * 2);
                labels = Arrays.copyOf(labels, cap);
                weights = Arrays.copyOf(weights, cap);
                rowStart = Arrays.copyOf(rowStart, cap + 1);
            }
            if (nnz + len > values.length) {
                final int cap = Math.max(nnz + len, values.length * 2);
                values = Arrays.copyOf(values, cap);
                indices = Arrays.copyOf(indices, cap);
            }
            for (int k = 0; k < len; k++) {
                final int j = idx[k];
                final double v = val[k];
                if (v == 0.0) {
                    continue;
                }
                values[nnz] = v;
                indices[nnz] = j;
                nnz++;
            }
            labels[rows] = label;
            weights[rows] = weight;
            rows++;
            rowStart[rows] = nnz;
        }

        /** Adds a dense row. */
        public void addDense(final double label, final double weight, final double[] x) {
            final int[] idx = new int[x.length];
            for (int j = 0; j < idx.length; j++) {
                idx[j] = j;
            }
            add(label, weight, idx, x, x.length);
        }

        /**
         * The batch so far; starts a new one. Dense when at least a quarter of the entries are non-zero:
         * the loss then runs through BLAS, which beats the sparse loops from about that density on.
         */
        public InstanceBatch build() {
            final InstanceBatch b;
            final double[] l = Arrays.copyOf(labels, rows);
            final double[] w = Arrays.copyOf(weights, rows);
            if ((long) nnz * 4 >= (long) rows * numFeatures) {
                final double[] dense = new double[rows * numFeatures];
                for (int r = 0; r < rows; r++) {
                    for (int k = rowStart[r]; k < rowStart[r + 1]; k++) {
                        dense[r * numFeatures + indices[k]] = values[k];
                    }
                }
                b = new InstanceBatch(rows, numFeatures, l, w, dense, null, null);
            } else {
                b = new InstanceBatch(
                        rows,
                        numFeatures,
                        l,
                        w,
                        Arrays.copyOf(values, nnz),
                        Arrays.copyOf(indices, nnz),
                        Arrays.copyOf(rowStart, rows + 1));
            }
            reset();
            return b;
        }
    }
}

package org.switchml.spark.ml.linear;

import java.util.Arrays;
import java.util.List;

/**
 * The non-zeros of consecutive sparse batches by column: columns ascending, each column's rows ascending.
 *
 * <p>Why: with a large model (10^7 coefficients) the row-by-row sparse kernel jumps to each row's
 * features in the coefficient and gradient arrays, one cache miss per non-zero. Walking the block by
 * column touches both arrays in index order, and the block's per-row scratch (margins, rows x K doubles)
 * stays in a core's cache. Every coefficient and gradient element still sees its terms in the same order
 * as row by row (a row's features ascending, a column's rows ascending), so the sums keep their bits.
 *
 * <p>The sparse kernels reach the non-zeros only through its two sweeps, for any number of coefficient sets:
 * {@link #addMargins} (forward) and {@link #addGradient} (transposed).
 *
 * <p>Made on first use and kept with the block's first batch (a transient field: not in the cached bytes),
 * so later evaluations over the same cached batches reuse it. Costs 12 bytes per non-zero beside the
 * batches' own.
 */
final class ColumnBlock {
    /** The batches, in order, whose rows are the block's rows 0 .. rows-1. */
    final InstanceBatch[] batches;

    final int rows;
    /** Distinct columns, ascending. */
    final int[] columns;
    /** Column {@code columns[i]} spans {@code [columnStart[i], columnStart[i + 1])}. */
    final int[] columnStart;
    /** Row of each non-zero within the block. */
    final int[] rowIndex;

    final double[] values;

    private ColumnBlock(
            final InstanceBatch[] batches,
            final int rows,
            final int[] columns,
            final int[] columnStart,
            final int[] rowIndex,
            final double[] values) {
        this.batches = batches;
        this.rows = rows;
        this.columns = columns;
        this.columnStart = columnStart;
        this.rowIndex = rowIndex;
        this.values = values;
    }

    /**
     * Rows per block for K coefficient sets: the block's margins (rows x K doubles) take about 2 MiB, a
     * core's cache, and with sparse rows over many features a larger block touches each column more
     * often per pass (26,214 rows at K = 10: a 50,000-row task over 2^20 features in two passes).
     */
    static int rowsFor(final int sets) {
        return Math.max(256, Math.min(65_536, (256 << 10) / Math.max(1, sets)));
    }

    /**
     * The forward sweep: adds each row's margins {@code x_r . coef} to {@code m}, for {@code sets} coefficient
     * sets laid out {@code (feature j, set c) -> j * sets + c} and row r's margins at {@code m[r * sets ..]}.
     * Column by column: each margin sees its terms in the order of the row's features.
     */
    void addMargins(final double[] coef, final int sets, final double[] m) {
        if (sets == 1) {
            for (int i = 0; i < columns.length; i++) {
                final double w = coef[columns[i]];
                for (int q = columnStart[i]; q < columnStart[i + 1]; q++) {
                    m[rowIndex[q]] += values[q] * w;
                }
            }
            return;
        }
        for (int i = 0; i < columns.length; i++) {
            final int cj = columns[i] * sets;
            for (int q = columnStart[i]; q < columnStart[i + 1]; q++) {
                final double x = values[q];
                final int o = rowIndex[q] * sets;
                for (int c = 0; c < sets; c++) {
                    m[o + c] += x * coef[cj + c];
                }
            }
        }
    }

    /**
     * The transposed sweep: adds {@code x_r * mult_r} of every row to the gradient {@code grad}, laid out as
     * the coefficients of {@link #addMargins}, with row r's multipliers at {@code mult[r * sets ..]}. Each
     * gradient element sees its terms in row order.
     */
    void addGradient(final double[] mult, final int sets, final double[] grad) {
        if (sets == 1) {
            for (int i = 0; i < columns.length; i++) {
                final int j = columns[i];
                double sum = grad[j];
                for (int q = columnStart[i]; q < columnStart[i + 1]; q++) {
                    sum += mult[rowIndex[q]] * values[q];
                }
                grad[j] = sum;
            }
            return;
        }
        for (int i = 0; i < columns.length; i++) {
            final int cj = columns[i] * sets;
            for (int q = columnStart[i]; q < columnStart[i + 1]; q++) {
                final double x = values[q];
                final int o = rowIndex[q] * sets;
                for (int c = 0; c < sets; c++) {
                    grad[cj + c] += x * mult[o + c];
                }
            }
        }
    }

    /**
     * A thread's margins array for column blocks, reused: a block's margins are about 2 MB, which the JVM
     * allocates outside the young generation, and one new array per block and evaluation starts a
     * concurrent collection cycle nearly every evaluation once the optimizer state fills the heap.
     */
    private static final ThreadLocal<double[]> MARGINS = new ThreadLocal<>();

    /** This thread's margins array, of at least {@code length} elements (the caller initializes those it uses). */
    static double[] margins(final int length) {
        double[] m = MARGINS.get();
        if (m == null || m.length < length) {
            m = new double[length];
            MARGINS.set(m);
        }
        return m;
    }

    /** The block of the sparse batches {@code run} (non-empty), reusing the one made before for the same run. */
    static ColumnBlock of(final List<InstanceBatch> run) {
        final InstanceBatch first = run.get(0);
        final ColumnBlock cached = first.columnBlock;
        if (cached != null && cached.covers(run)) {
            return cached;
        }
        final ColumnBlock b = build(run);
        first.columnBlock = b;
        return b;
    }

    private boolean covers(final List<InstanceBatch> run) {
        if (run.size() != batches.length) {
            return false;
        }
        for (int i = 0; i < batches.length; i++) {
            if (run.get(i) != batches[i]) {
                return false;
            }
        }
        return true;
    }

    private static ColumnBlock build(final List<InstanceBatch> run) {
        int nnz = 0;
        int rows = 0;
        for (final InstanceBatch b : run) {
            if (b.indices == null) {
                throw new IllegalArgumentException("a column block holds sparse batches only");
            }
            nnz = Math.addExact(nnz, b.rowStart[b.rows]);
            rows = Math.addExact(rows, b.rows);
        }
        final int features = run.get(0).numFeatures;
        final InstanceBatch[] batches = run.toArray(new InstanceBatch[0]);
        return features <= 4L * nnz + 1024 ? byCounting(batches, rows, nnz, features) : bySorting(batches, rows, nnz);
    }

    /** A counting sort by column (one pass over the non-zeros in row order keeps each column's rows ascending). */
    private static ColumnBlock byCounting(
            final InstanceBatch[] run, final int rows, final int nnz, final int features) {
        final int[] next = new int[features + 1];
        for (final InstanceBatch b : run) {
            for (int p = 0; p < b.rowStart[b.rows]; p++) {
                next[b.indices[p] + 1]++;
            }
        }
        int distinct = 0;
        for (int j = 0; j < features; j++) {
            if (next[j + 1] > 0) {
                distinct++;
            }
            next[j + 1] += next[j];
        }
        final int[] rowIndex = new int[nnz];
        final double[] values = new double[nnz];
        int row = 0;
        for (final InstanceBatch b : run) {
            for (int r = 0; r < b.rows; r++, row++) {
                for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                    final int at = next[b.indices[p]]++;
                    rowIndex[at] = row;
                    values[at] = b.values[p];
                }
            }
        }
        // next[j] is now the end of column j
        final int[] columns = new int[distinct];
        final int[] columnStart = new int[distinct + 1];
        int c = 0;
        int begin = 0;
        for (int j = 0; j < features; j++) {
            if (next[j] > begin) {
                columns[c] = j;
                columnStart[c++] = begin;
            }
            begin = next[j];
        }
        columnStart[distinct] = nnz;
        return new ColumnBlock(run, rows, columns, columnStart, rowIndex, values);
    }

    /** Sorting (column, position in row order) pairs: for feature spaces much larger than the block. */
    private static ColumnBlock bySorting(final InstanceBatch[] run, final int rows, final int nnz) {
        final long[] keys = new long[nnz];
        final int[] rowOf = new int[nnz];
        final double[] valueOf = new double[nnz];
        int q = 0;
        int row = 0;
        for (final InstanceBatch b : run) {
            for (int r = 0; r < b.rows; r++, row++) {
                for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++, q++) {
                    keys[q] = ((long) b.indices[p] << 32) | q;
                    rowOf[q] = row;
                    valueOf[q] = b.values[p];
                }
            }
        }
        Arrays.sort(keys);
        final int[] rowIndex = new int[nnz];
        final double[] values = new double[nnz];
        int distinct = 0;
        long previous = -1;
        for (int i = 0; i < nnz; i++) {
            final long column = keys[i] >>> 32;
            if (column != previous) {
                distinct++;
                previous = column;
            }
            final int at = (int) keys[i];
            rowIndex[i] = rowOf[at];
            values[i] = valueOf[at];
        }
        final int[] columns = new int[distinct];
        final int[] columnStart = new int[distinct + 1];
        int c = -1;
        previous = -1;
        for (int i = 0; i < nnz; i++) {
            final long column = keys[i] >>> 32;
            if (column != previous) {
                columns[++c] = (int) column;
                columnStart[c] = i;
                previous = column;
            }
        }
        columnStart[distinct] = nnz;
        return new ColumnBlock(run, rows, columns, columnStart, rowIndex, values);
    }
}

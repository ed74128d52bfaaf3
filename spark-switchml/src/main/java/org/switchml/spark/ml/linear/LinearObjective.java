package org.switchml.spark.ml.linear;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A linear model's objective in MLlib 4.0.1's training space, for the replicated loop (MLlib's
 * {@code RDDLossFunction}, with the allreduce in place of treeAggregate): a loss's {@link BlockKernel}s over the
 * features scaled by 1/std (not centered), weighted and averaged over the weight sum, with "virtual centering"
 * when fitting with the mean (as MLlib's block aggregators do), plus an {@link L2Regularization}.
 *
 * <p>The {@link InstanceBatch}es hold the features unscaled: the scaling is applied to the coefficients once
 * per evaluation ({@code x_j / std_j * w_j = x_j * (w_j / std_j)}, {@link #prepare}) and to the gradient sums
 * once per partition, which is the same function at no cost per entry, and lets the statistics and the fit
 * share one cached copy of the input.
 *
 * <p>Each partition contributes {@link #contribution} = {@code [gradient sum (dim), loss sum, weight sum,
 * non-finite flag]}; the element-wise sum over partitions goes to {@link #valueAndGradient}. A partition
 * whose loss or gradient is not finite sends zeros and the flag, so that the allreduce only ever carries
 * finite numbers; the objective is then +infinity (the line search shortens its step, as in MLlib). The
 * flag is 2^1000: the largest value of its quantization block, so no encoding can round it away (the
 * evaluation is discarded anyway), and up to 2^23 of them (one per task) still sum to a finite number.
 */
public class LinearObjective implements Serializable {
    private static final long serialVersionUID = 1L;

    /** What a partition with a non-finite loss or gradient puts in the flag element. */
    static final double NON_FINITE = 0x1p1000;

    private final CoefficientLayout layout;
    private final Standardization scaling;
    private final boolean fitWithMean;
    private final BlockKernel<InstanceBatch> dense;
    private final BlockKernel<ColumnBlock> sparse;
    private final L2Regularization l2;

    /**
     * @param fitWithMean virtual centering (needs the intercepts)
     * @param dense       the loss's kernel for dense batches
     * @param sparse      the loss's kernel for column blocks of sparse batches
     */
    LinearObjective(
            final CoefficientLayout layout,
            final Standardization scaling,
            final boolean fitWithMean,
            final BlockKernel<InstanceBatch> dense,
            final BlockKernel<ColumnBlock> sparse,
            final L2Regularization l2) {
        if (fitWithMean && !layout.fitIntercept()) {
            throw new IllegalArgumentException("fitting with the mean needs an intercept");
        }
        this.layout = layout;
        this.scaling = scaling;
        this.fitWithMean = fitWithMean;
        this.dense = dense;
        this.sparse = sparse;
        this.l2 = l2;
    }

    /** Where each coefficient sits. */
    public final CoefficientLayout layout() {
        return layout;
    }

    /** The per-feature {@code 1 / std_j} this copy computes with (tests compare copies). */
    final double[] inverseStd() {
        return scaling.inverseStd();
    }

    /** The features' standardization. */
    final Standardization scaling() {
        return scaling;
    }

    /** Coefficient sets: K for multinomial, 1 otherwise. */
    public final int coefficientSets() {
        return layout.sets();
    }

    /** Number of coefficients, intercepts included. */
    public final int dim() {
        return layout.dim();
    }

    /** Length of a partition's contribution: gradient, loss sum, weight sum, non-finite flag. */
    public final int vectorLength() {
        return dim() + 3;
    }

    /** Whether the fit uses virtual centering. */
    public final boolean fitWithMean() {
        return fitWithMean;
    }

    // ------------------------------------------------------------------ per partition

    /** {@link PreparedPoint} for the point {@code coef} (one sweep over the coefficients). */
    public final PreparedPoint prepare(final double[] coef) {
        return prepare(coef, null);
    }

    /**
     * {@link PreparedPoint} for the point {@code coef}, its effective coefficients written into {@code spare}
     * when that is an array of the right length (every element is overwritten), else into a new one.
     */
    public final PreparedPoint prepare(final double[] coef, final double[] spare) {
        final int sets = layout.sets();
        final int f = layout.numFeatures();
        final double[] inverseStd = scaling.inverseStd();
        final double[] effective = spare != null && spare.length == f * sets ? spare : new double[f * sets];
        for (int j = 0; j < f; j++) {
            final double inv = inverseStd[j];
            for (int c = 0; c < sets; c++) {
                effective[j * sets + c] = coef[j * sets + c] * inv;
            }
        }
        return new PreparedPoint(effective, offsets(coef), sets);
    }

    /**
     * Each set's margin of an all-zero row at {@code coef}: its intercept, minus the centering term when fitting
     * with the mean. An objective whose rows' margins have another constant part (a regression's centered label)
     * overrides it.
     */
    double[] offsets(final double[] coef) {
        final int k = layout.sets();
        final int f = layout.numFeatures();
        final double[] offset = new double[k];
        if (!layout.fitIntercept()) {
            return offset;
        }
        for (int c = 0; c < k; c++) {
            offset[c] = coef[f * k + c];
        }
        if (fitWithMean) {
            final double[] scaledMean = scaling.scaledMean();
            final double[] dot = new double[k];
            for (int j = 0; j < f; j++) {
                final double mu = scaledMean[j];
                for (int c = 0; c < k; c++) {
                    dot[c] += coef[j * k + c] * mu;
                }
            }
            for (int c = 0; c < k; c++) {
                offset[c] += -1.0 * dot[c];
            }
        }
        return offset;
    }

    /** A partition's gradient sum, loss sum and weight sum at {@code coef}. */
    public final double[] contribution(final Iterable<InstanceBatch> batches, final double[] coef) {
        return contribution(batches, prepare(coef));
    }

    /** A partition's gradient sum, loss sum and weight sum at the point {@code p} was prepared for. */
    public final double[] contribution(final Iterable<InstanceBatch> batches, final PreparedPoint p) {
        return contribution(batches, p, null);
    }

    /**
     * As {@link #contribution(Iterable, PreparedPoint)}, into {@code spare} (zeroed first) when that is an
     * array of length {@link #vectorLength()}, else into a new array.
     */
    public final double[] contribution(
            final Iterable<InstanceBatch> batches, final PreparedPoint p, final double[] spare) {
        final int dim = dim();
        final double[] out;
        if (spare != null && spare.length == dim + 3) {
            out = spare;
            Arrays.fill(out, 0.0);
        } else {
            out = new double[dim + 3];
        }
        final BlockSums sums = new BlockSums(out, layout.sets());
        // Runs of sparse batches go through column blocks, dense batches one by one, in batch order.
        final List<InstanceBatch> run = new ArrayList<>();
        int runRows = 0;
        final int blockRows = ColumnBlock.rowsFor(layout.sets());
        for (final InstanceBatch b : batches) {
            checkFeatures(b);
            if (b.indices != null) {
                run.add(b);
                runRows += b.rows;
                if (runRows >= blockRows) {
                    sparse.add(ColumnBlock.of(run), p, sums);
                    run.clear();
                    runRows = 0;
                }
                continue;
            }
            if (!run.isEmpty()) {
                sparse.add(ColumnBlock.of(run), p, sums);
                run.clear();
                runRows = 0;
            }
            dense.add(b, p, sums);
        }
        if (!run.isEmpty()) {
            sparse.add(ColumnBlock.of(run), p, sums);
        }
        sums.foldTransposed();
        finish(sums);
        return out;
    }

    /**
     * One sweep: the gradient sum back to the training space (d/dw_j of x_j / std_j * w_j), then, when fitting
     * with the mean, minus what centering would have removed (the data were not centered); the intercepts'
     * sums, the loss and weight sums; and the check that every element is finite.
     */
    private void finish(final BlockSums sums) {
        final double[] out = sums.gradient;
        final double[] multiplierSum = sums.multiplierSums;
        final int sets = layout.sets();
        final int f = layout.numFeatures();
        final int dim = dim();
        final double[] inverseStd = scaling.inverseStd();
        boolean finite = true;
        if (fitWithMean) {
            final double[] scaledMean = scaling.scaledMean();
            for (int j = 0; j < f; j++) {
                final double inv = inverseStd[j];
                final double mu = scaledMean[j];
                for (int c = 0; c < sets; c++) {
                    final int i = j * sets + c;
                    final double g = out[i] * inv + -multiplierSum[c] * mu;
                    out[i] = g;
                    finite &= Double.isFinite(g);
                }
            }
        } else {
            for (int j = 0; j < f; j++) {
                final double inv = inverseStd[j];
                for (int c = 0; c < sets; c++) {
                    final int i = j * sets + c;
                    final double g = out[i] * inv;
                    out[i] = g;
                    finite &= Double.isFinite(g);
                }
            }
        }
        if (layout.fitIntercept()) {
            for (int c = 0; c < sets; c++) {
                out[f * sets + c] += multiplierSum[c];
                finite &= Double.isFinite(out[f * sets + c]);
            }
        }
        out[dim] = sums.loss;
        out[dim + 1] = sums.weight;
        finite &= Double.isFinite(out[dim]);
        if (!finite) {
            Arrays.fill(out, 0, dim + 1, 0.0);
            out[dim + 2] = NON_FINITE;
        }
    }

    private void checkFeatures(final InstanceBatch b) {
        if (b.numFeatures != layout.numFeatures()) {
            throw new IllegalArgumentException("Dimensions mismatch when adding new instance. Expecting "
                    + layout.numFeatures() + " but got " + b.numFeatures + ".");
        }
    }

    // ------------------------------------------------------------------ after the allreduce

    /**
     * The objective at {@code coef} from the summed contributions: the weighted mean loss plus the penalty;
     * writes the gradient into {@code grad}. +infinity (and a NaN gradient) if any partition's loss or
     * gradient was not finite, or if the weight sum did not survive the switch's quantization beside a huge
     * loss.
     */
    public final double valueAndGradient(final double[] sum, final double[] coef, final double[] grad) {
        final int dim = dim();
        if (sum.length != dim + 3) {
            throw new IllegalArgumentException("sum has length " + sum.length + ", expected " + (dim + 3));
        }
        if (sum[dim + 2] >= NON_FINITE / 2) {
            Arrays.fill(grad, Double.NaN);
            return Double.POSITIVE_INFINITY;
        }
        final double weightSum = sum[dim + 1];
        if (!(weightSum > 0.0)) {
            // The statistics already found a positive weight sum (the fit fails before the loop
            // otherwise): here it was rounded away beside a huge (finite) loss in its quantization
            // block. The evaluation is unusable, as one with a non-finite loss: the line search
            // shortens its step.
            Arrays.fill(grad, Double.NaN);
            return Double.POSITIVE_INFINITY;
        }
        return sum[dim] / weightSum + l2.meanPlusGradient(sum, 1.0 / weightSum, coef, grad);
    }

    // ------------------------------------------------------------------ the centered problem

    /** Moves a solution of the uncentered problem to the centered one (intercepts += W . scaledMean). */
    public final void toCentered(final double[] x) {
        if (fitWithMean) {
            layout.shiftIntercepts(x, scaling.scaledMean(), 1.0);
        }
    }

    /** Moves a solution of the centered problem back (intercepts -= W . scaledMean). */
    public final void fromCentered(final double[] x) {
        if (fitWithMean) {
            layout.shiftIntercepts(x, scaling.scaledMean(), -1.0);
        }
    }
}

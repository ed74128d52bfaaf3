package org.switchml.spark.ml.linear;

import java.util.Arrays;
import java.util.List;
import org.switchml.spark.ReplicatedLoop;

/**
 * The statistics MLlib's LogisticRegression computes before training (feature mean and unbiased
 * weighted std, the count and weight sum of rows with positive weight, the label weight histogram) as
 * sums, so that they travel through the switch: a {@link ReplicatedLoop.Body} of two rounds in one
 * barrier stage, over the cached {@link InstanceBatch}es the fit then uses.
 *
 * <p>Why two rounds: the switch quantizes a block of consecutive elements against the block's largest
 * one, so a feature's sums in a vector whose other features are much larger lose their low bits, and a
 * variance computed as {@code E[x^2] - E[x]^2} from them can lose everything; so can a weight sum or a
 * count placed beside them. Round 1 sums only what a rough mean {@code m_j} and a power-of-two scale
 * {@code s_j} of each feature need: {@code w}, {@code w x} and {@code w x^2}. Round 2 sums everything
 * that must be exact, all of comparable size: {@code w z}, {@code w z^2} and {@code w} over the
 * non-zero entries, {@code z = (x - m_j) / s_j}, and the weight sum, count, {@code w^2} and label
 * histogram; the exact statistics follow from these shifted sums.
 *
 * <p>Labels: the histogram has a fixed capacity; labels at or above it are counted in an overflow
 * element, non-integer or negative labels in an invalid element (MLlib's countInvalid). A regression's summary
 * ({@link #withLabel}) keeps no histogram: it takes the label's mean and std as those of one more column.
 */
public final class FeatureSummary implements ReplicatedLoop.Body<InstanceBatch> {
    private static final long serialVersionUID = 1L;

    private final int numFeatures;
    private final int labelCapacity;
    private final String keepAs;
    /** Whether the label is summarized as column F (a regression's), with no histogram. */
    private final boolean labelColumn;
    /** Columns summarized: the features, and the label with {@link #labelColumn}. */
    private final int columns;

    /**
     * @param numFeatures   F (every row must have this size)
     * @param labelCapacity histogram slots (labels 0 .. capacity-1)
     */
    public FeatureSummary(final int numFeatures, final int labelCapacity) {
        this(numFeatures, labelCapacity, null);
    }

    /**
     * A summary whose every executor keeps the mean and std it ends with under {@code keepAs}, for an
     * objective whose standardization takes them from there ({@link Standardization#kept}).
     *
     * @param keepAs a key no other summary uses; null: keep nothing
     */
    FeatureSummary(final int numFeatures, final int labelCapacity, final String keepAs) {
        this(numFeatures, labelCapacity, keepAs, false);
    }

    private FeatureSummary(
            final int numFeatures, final int labelCapacity, final String keepAs, final boolean labelColumn) {
        if (numFeatures < 0 || labelCapacity < 1) {
            throw new IllegalArgumentException(
                    "numFeatures >= 0 and labelCapacity >= 1: " + numFeatures + ", " + labelCapacity);
        }
        this.numFeatures = numFeatures;
        this.labelCapacity = labelCapacity;
        this.keepAs = keepAs;
        this.labelColumn = labelColumn;
        this.columns = numFeatures + (labelColumn ? 1 : 0);
    }

    /**
     * A regression's summary: the features' statistics and the label's mean and unbiased weighted std (as
     * MLlib's label summarizer has them), no histogram; every executor keeps the features' mean and std under
     * {@code keepAs} (null: nothing).
     */
    static FeatureSummary withLabel(final int numFeatures, final String keepAs) {
        return new FeatureSummary(numFeatures, 1, keepAs, true);
    }

    /** Rounds of the loop. */
    public static int rounds() {
        return 2;
    }

    /** Length of each round's vector (round 2's; round 1 is zero-padded). */
    public int vectorLength() {
        return R2_HIST + labelCapacity + 2 + 3 * columns;
    }

    /** The loop's initial state. */
    public double[] initialState() {
        return new double[] {0};
    }

    // Below, F stands for the columns: the features, and the label as one more with labelColumn.
    // round 1: [W, sum w x (F), sum w x^2 (F)]
    private static final int R1_SUM = 1;
    // round 2: [W, count, sum w^2, histogram (C), overflow, invalid, sum w z (F), sum w z^2 (F), W non-zero (F)]
    private static final int R2_WEIGHT = 0;
    private static final int R2_COUNT = 1;
    private static final int R2_WEIGHT_SQ = 2;
    private static final int R2_HIST = 3;

    private int overflowIdx() {
        return R2_HIST + labelCapacity;
    }

    private int invalidIdx() {
        return overflowIdx() + 1;
    }

    private int shiftedIdx() {
        return invalidIdx() + 1;
    }

    // state after round 1 (and, with mean and std in place of m and s, after round 2):
    // [round, W, count, W2, hist..., overflow, invalid, m (F), s (F)]
    private int stateMeanIdx() {
        return 4 + labelCapacity + 2;
    }

    @Override
    public double[] contribution(final List<InstanceBatch> partition, final double[] state, final int iteration) {
        final double[] v = new double[vectorLength()];
        for (final InstanceBatch b : partition) {
            if (b.numFeatures != numFeatures) {
                throw new IllegalArgumentException("Dimensions mismatch when adding new sample. Expecting "
                        + numFeatures + " but got " + b.numFeatures + ".");
            }
            if (iteration == 0) {
                round1(b, v);
            } else {
                round2(b, state, v);
            }
        }
        return v;
    }

    private void round1(final InstanceBatch b, final double[] v) {
        final int sum = R1_SUM;
        final int sq = sum + columns;
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            if (!(w >= 0.0)) {
                throw new IllegalArgumentException("sample weight, " + w + " has to be >= 0.0");
            }
            if (w == 0.0) {
                continue; // MLlib's summarizers skip rows of weight 0 entirely
            }
            v[0] += w;
            if (b.indices == null) {
                final int base = r * numFeatures;
                for (int j = 0; j < numFeatures; j++) {
                    final double x = b.values[base + j];
                    if (x != 0.0) {
                        v[sum + j] += w * x;
                        v[sq + j] += w * x * x;
                    }
                }
            } else {
                for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                    final int j = b.indices[p];
                    final double x = b.values[p];
                    v[sum + j] += w * x;
                    v[sq + j] += w * x * x;
                }
            }
            if (labelColumn) {
                final double y = b.labels[r];
                if (y != 0.0) {
                    v[sum + numFeatures] += w * y;
                    v[sq + numFeatures] += w * y * y;
                }
            }
        }
    }

    private void round2(final InstanceBatch b, final double[] state, final double[] v) {
        final int f = numFeatures;
        final int mIdx = stateMeanIdx();
        final int sIdx = mIdx + columns;
        final int out = shiftedIdx();
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            if (w == 0.0) {
                continue;
            }
            v[R2_WEIGHT] += w;
            v[R2_COUNT] += 1;
            v[R2_WEIGHT_SQ] += w * w;
            final double label = b.labels[r];
            if (labelColumn) {
                if (label != 0.0) {
                    addShifted(v, out, f, label, w, state[mIdx + f], state[sIdx + f]);
                }
            } else if (label - (int) label != 0.0 || label < 0) {
                v[invalidIdx()] += 1;
            } else if (label >= labelCapacity) {
                v[overflowIdx()] += 1;
            } else {
                v[R2_HIST + (int) label] += w;
            }
            if (b.indices == null) {
                final int base = r * f;
                for (int j = 0; j < f; j++) {
                    final double x = b.values[base + j];
                    if (x != 0.0) {
                        addShifted(v, out, j, x, w, state[mIdx + j], state[sIdx + j]);
                    }
                }
            } else {
                for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                    final int j = b.indices[p];
                    addShifted(v, out, j, b.values[p], w, state[mIdx + j], state[sIdx + j]);
                }
            }
        }
    }

    private void addShifted(
            final double[] v,
            final int out,
            final int j,
            final double x,
            final double w,
            final double m,
            final double s) {
        final double z = (x - m) / s;
        v[out + j] += w * z;
        v[out + columns + j] += w * z * z;
        v[out + 2 * columns + j] += w;
    }

    @Override
    public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
        final int f = columns;
        final int c = labelCapacity;
        final double[] next = new double[stateMeanIdx() + 2 * f];
        final int mIdx = stateMeanIdx();
        final int sIdx = mIdx + f;
        if (iteration == 0) {
            next[0] = 1;
            final double w = sum[0];
            for (int j = 0; j < f; j++) {
                final double mean = w > 0 ? sum[R1_SUM + j] / w : 0.0;
                final double rms = w > 0 ? Math.sqrt(sum[R1_SUM + f + j] / w) : 0.0;
                next[mIdx + j] = Double.isFinite(mean) ? mean : 0.0;
                // a power of two, so that dividing by it is exact
                next[sIdx + j] = rms > 0 && Double.isFinite(rms) ? Math.scalb(1.0, Math.getExponent(rms)) : 1.0;
            }
            return new ReplicatedLoop.Step(next, new double[0], false);
        }
        next[0] = 2;
        System.arraycopy(sum, 0, next, 1, 3 + c + 2); // W, count, W2, histogram, overflow, invalid
        final double w = sum[R2_WEIGHT];
        final double w2 = sum[R2_WEIGHT_SQ];
        final double denominator = w > 0 ? w - w2 / w : 0.0;
        final int out = shiftedIdx();
        for (int j = 0; j < f; j++) {
            final double m = state[mIdx + j];
            final double s = state[sIdx + j];
            final double zeros = w - sum[out + 2 * f + j];
            final double t1 = sum[out + j] + zeros * (-m / s);
            final double t2 = sum[out + f + j] + zeros * (m / s) * (m / s);
            next[mIdx + j] = w > 0 ? m + s * (t1 / w) : 0.0;
            final double variance = denominator > 0.0 ? Math.max((t2 - t1 * t1 / w) * s * s / denominator, 0.0) : 0.0;
            next[sIdx + j] = Math.sqrt(variance);
        }
        if (keepAs != null) {
            ExecutorStatistics.keep(
                    keepAs,
                    new MeanStd(
                            Arrays.copyOfRange(next, mIdx, mIdx + numFeatures),
                            Arrays.copyOfRange(next, sIdx, sIdx + numFeatures)));
        }
        return new ReplicatedLoop.Step(next, new double[0], true);
    }

    /**
     * The statistics.
     *
     * @param mean          weighted mean per feature
     * @param std           unbiased weighted standard deviation per feature (MLlib's Summarizer std)
     * @param count         rows with positive weight
     * @param weightSum     sum of weights
     * @param histogram     label weight sums, up to the largest label seen
     * @param labelOverflow rows whose label is at or beyond the histogram's capacity
     * @param invalidLabels rows with a negative or non-integer label
     * @param labelMean     a regression's: the label's weighted mean (NaN for a classification)
     * @param labelStd      a regression's: the label's unbiased weighted std (NaN for a classification)
     */
    public record Stats(
            double[] mean,
            double[] std,
            long count,
            double weightSum,
            double[] histogram,
            long labelOverflow,
            long invalidLabels,
            double labelMean,
            double labelStd) {}

    /** The statistics from the loop's final state. */
    public Stats stats(final double[] state) {
        if (state[0] != 2) {
            throw new IllegalArgumentException("the summary loop did not finish (round " + state[0] + ")");
        }
        final int c = labelCapacity;
        final int mIdx = stateMeanIdx();
        final int sIdx = mIdx + columns;
        int classes = 0;
        for (int k = 0; k < c && !labelColumn; k++) {
            if (state[4 + k] != 0.0) {
                classes = k + 1;
            }
        }
        return new Stats(
                Arrays.copyOfRange(state, mIdx, mIdx + numFeatures),
                Arrays.copyOfRange(state, sIdx, sIdx + numFeatures),
                Math.round(state[2]),
                state[1],
                Arrays.copyOfRange(state, 4, 4 + classes),
                Math.round(state[4 + c]),
                Math.round(state[5 + c]),
                labelColumn ? state[mIdx + numFeatures] : Double.NaN,
                labelColumn ? state[sIdx + numFeatures] : Double.NaN);
    }

    /** Runs both rounds locally over the given partitions (tests; the driver-side reference). */
    public Stats computeLocally(final List<List<InstanceBatch>> partitions) {
        double[] state = initialState();
        for (int it = 0; it < rounds(); it++) {
            final double[] total = new double[vectorLength()];
            for (final List<InstanceBatch> p : partitions) {
                final double[] v = contribution(p, state, it);
                for (int i = 0; i < total.length; i++) {
                    total[i] += v[i];
                }
            }
            state = update(state, total, it).state();
        }
        return stats(state);
    }
}

package org.switchml.spark.ml.linear;

import java.util.Arrays;

/** The multinomial logistic (softmax) loss, as MLlib's MultinomialLogisticBlockAggregator computes it per row. */
final class SoftmaxLoss {
    private SoftmaxLoss() {}

    /**
     * A batch's rows from margins to multipliers in place (row r's K margins at {@code m[(o + r) * k ..]}; rows
     * of weight 0 get 0), adding the batch's loss, weight and multiplier sums (each summed over the batch
     * first) to {@code sums}.
     */
    static void multipliers(final InstanceBatch b, final double[] m, final int o, final int k, final BlockSums sums) {
        final double[] multiplierSum = new double[k];
        double loss = 0.0;
        double weightSum = 0.0;
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            weightSum += w;
            final int at = (o + r) * k;
            if (!(w > 0)) {
                Arrays.fill(m, at, at + k, 0.0);
                continue;
            }
            loss += rowMultipliers(m, at, k, w, (int) b.labels[r], multiplierSum);
        }
        for (int c = 0; c < k; c++) {
            sums.multiplierSums[c] += multiplierSum[c];
        }
        sums.loss += loss;
        sums.weight += weightSum;
    }

    /**
     * Turns one row's margins ({@code m[o .. o+k)}) into its multipliers {@code w (p - onehot(label))},
     * adds them to {@code multiplierSum}, and returns the row's loss {@code -w log p_label}.
     */
    private static double rowMultipliers(
            final double[] m, final int o, final int k, final double w, final int label, final double[] multiplierSum) {
        softmax(m, o, k);
        final double loss = -w * Math.log(m[o + label]);
        if (w != 1) {
            for (int c = 0; c < k; c++) {
                m[o + c] *= w;
            }
        }
        m[o + label] -= w;
        for (int c = 0; c < k; c++) {
            multiplierSum[c] += m[o + c];
        }
        return loss;
    }

    /** In-place softmax of {@code m[o .. o+k)}, stable against overflow; a +infinity margin takes all the mass. */
    static void softmax(final double[] m, final int o, final int k) {
        double max = -Double.MAX_VALUE;
        for (int c = o; c < o + k; c++) {
            if (m[c] == Double.POSITIVE_INFINITY) {
                Arrays.fill(m, o, o + k, 0.0);
                m[c] = 1.0;
                return;
            }
            if (m[c] > max) {
                max = m[c];
            }
        }
        double sum = 0.0;
        for (int c = o; c < o + k; c++) {
            final double e = Math.exp(m[c] - max);
            m[c] = e;
            sum += e;
        }
        final double inv = 1.0 / sum;
        for (int c = o; c < o + k; c++) {
            m[c] *= inv;
        }
    }
}

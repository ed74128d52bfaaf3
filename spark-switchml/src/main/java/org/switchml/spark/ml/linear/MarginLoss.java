package org.switchml.spark.ml.linear;

import java.io.Serializable;

/**
 * A loss of one margin per row ({@code margin = x . w + b}): its value and its multiplier (the derivative in the
 * margin) for a row of weight {@code w > 0} and label {@code label}. The binary kernels take the rest: margins,
 * gradient, and the sums.
 */
interface MarginLoss extends Serializable {
    /** The row's weighted loss. */
    double loss(double weight, double label, double margin);

    /** The row's weighted multiplier: {@code weight * d loss / d margin}. */
    double multiplier(double weight, double label, double margin);

    /**
     * A batch's rows from margins to multipliers in place (row r's margin at {@code m[o + r]}; rows of weight
     * 0 get 0), adding the batch's loss, weight and multiplier sums (each summed over the batch first) to
     * {@code sums}. Returns whether any multiplier is non-zero.
     */
    default boolean multipliers(final InstanceBatch b, final double[] m, final int o, final BlockSums sums) {
        double loss = 0.0;
        double weightSum = 0.0;
        double multiplierSum = 0.0;
        boolean any = false;
        for (int r = 0; r < b.rows; r++) {
            final double w = b.weights[r];
            weightSum += w;
            if (!(w > 0)) {
                m[o + r] = 0.0;
                continue;
            }
            final double margin = m[o + r];
            loss += loss(w, b.labels[r], margin);
            final double multiplier = multiplier(w, b.labels[r], margin);
            m[o + r] = multiplier;
            multiplierSum += multiplier;
            any |= multiplier != 0.0;
        }
        sums.multiplierSums[0] += multiplierSum;
        sums.loss += loss;
        sums.weight += weightSum;
        return any;
    }
}

package org.switchml.spark.ml.linear;

/**
 * A partition's sums while its blocks are added, in the unscaled feature space: the gradient sum
 * {@code sum_r x_r * mult_r} (laid out as the coefficients), each set's sum of the rows' multipliers
 * {@code mult_r} (for the intercepts and the virtual centering), the loss sum and the weight sum.
 */
final class BlockSums {
    /** The gradient sum; kernels add into its first {@code F * sets} elements. */
    final double[] gradient;

    final double[] multiplierSums;
    double loss;
    double weight;
    private double[] transposed;
    private int features;

    BlockSums(final double[] gradient, final int sets) {
        this.gradient = gradient;
        this.multiplierSums = new double[sets];
    }

    /**
     * A gradient sum laid out F x K column-major ({@code c * F + j}), for a kernel whose BLAS runs faster so;
     * {@link #foldTransposed} adds it to {@link #gradient} once every block is in.
     */
    double[] transposedGradient(final int numFeatures, final int sets) {
        if (transposed == null) {
            transposed = new double[numFeatures * sets];
            features = numFeatures;
        }
        return transposed;
    }

    /** Adds the transposed gradient sum, if any kernel used it, to {@link #gradient}. */
    void foldTransposed() {
        if (transposed == null) {
            return;
        }
        final int sets = multiplierSums.length;
        for (int j = 0; j < features; j++) {
            for (int c = 0; c < sets; c++) {
                gradient[j * sets + c] += transposed[c * features + j];
            }
        }
    }
}

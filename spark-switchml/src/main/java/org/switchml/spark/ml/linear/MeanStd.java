package org.switchml.spark.ml.linear;

import java.io.Serializable;

/**
 * A fit's per-feature mean and std: what each executor's statistics stage ends with, and what the fit's
 * broadcast carries for an executor that did not keep them ({@link ExecutorStatistics}). A class, not a
 * record: Kryo, when a user's serializer is Kryo without our registrator, cannot build records.
 */
final class MeanStd implements Serializable {
    private static final long serialVersionUID = 1L;

    private final double[] mean;
    private final double[] std;

    /**
     * @param mean weighted mean per feature
     * @param std  unbiased weighted standard deviation per feature
     */
    MeanStd(final double[] mean, final double[] std) {
        this.mean = mean;
        this.std = std;
    }

    double[] mean() {
        return mean;
    }

    double[] std() {
        return std;
    }
}

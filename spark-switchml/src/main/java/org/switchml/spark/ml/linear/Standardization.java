package org.switchml.spark.ml.linear;

import java.io.Serializable;
import org.apache.spark.broadcast.Broadcast;

/**
 * A fit's feature standardization, as the objective's copies in tasks receive it: {@code 1/std_j},
 * {@code mean_j/std_j} (both 0 where std is 0) and {@code std_j}, each derived from the statistics' mean and std
 * by {@link #derive}, so that every copy has the same bits.
 *
 * <p>Two forms. {@link #of} carries the arrays (16 bytes per feature in every serialized copy). {@link #kept}
 * carries a reference instead: the key under which each executor's copy of the statistics stage kept its mean
 * and std ({@link ExecutorStatistics}), and their broadcast for an executor that kept nothing under that key. A
 * copy derives its arrays on first use from what its executor kept, else from the broadcast; so the fit's tasks
 * do not carry 2.4 MB each at 10^5 features, all fetched through the driver's one link.
 */
public abstract class Standardization implements Serializable {
    private static final long serialVersionUID = 1L;

    private Standardization() {}

    /** {@code 1 / std_j} (0 where std is 0). */
    abstract double[] inverseStd();

    /** {@code mean_j / std_j} (0 where std is 0). */
    abstract double[] scaledMean();

    /** {@code std_j}. */
    abstract double[] std();

    /** The standardization of these arrays, which every serialized copy carries. */
    static Standardization of(final double[] inverseStd, final double[] scaledMean, final double[] std) {
        return new Carried(inverseStd, scaledMean, std);
    }

    /**
     * The standardization of {@code mean} and {@code std}, which serialized copies take from their executor's
     * statistics kept under {@code key}, else from {@code statistics}.
     */
    static Standardization kept(
            final String key, final Broadcast<MeanStd> statistics, final double[] mean, final double[] std) {
        return new Kept(key, statistics, derive(mean, std));
    }

    /** {@code {1 / std_j (0 where std is 0), mean_j / std_j (likewise), std_j}}. */
    static double[][] derive(final double[] mean, final double[] std) {
        final double[] inverseStd = new double[std.length];
        final double[] scaledMean = new double[std.length];
        for (int j = 0; j < std.length; j++) {
            inverseStd[j] = std[j] != 0 ? 1.0 / std[j] : 0.0;
            scaledMean[j] = inverseStd[j] * mean[j];
        }
        return new double[][] {inverseStd, scaledMean, std};
    }

    private static final class Carried extends Standardization {
        private static final long serialVersionUID = 1L;
        private final double[] inverseStd;
        private final double[] scaledMean;
        private final double[] std;

        Carried(final double[] inverseStd, final double[] scaledMean, final double[] std) {
            this.inverseStd = inverseStd;
            this.scaledMean = scaledMean;
            this.std = std;
        }

        @Override
        double[] inverseStd() {
            return inverseStd;
        }

        @Override
        double[] scaledMean() {
            return scaledMean;
        }

        @Override
        double[] std() {
            return std;
        }
    }

    private static final class Kept extends Standardization {
        private static final long serialVersionUID = 1L;
        private final String key;
        private final Broadcast<MeanStd> statistics;
        /** The derived arrays: the driver's from the start, a copy's from its first use on. */
        private transient volatile double[][] derived;

        Kept(final String key, final Broadcast<MeanStd> statistics, final double[][] derived) {
            this.key = key;
            this.statistics = statistics;
            this.derived = derived;
        }

        private double[][] derived() {
            double[][] d = derived;
            if (d == null) {
                synchronized (this) {
                    d = derived;
                    if (d == null) {
                        MeanStd kept = ExecutorStatistics.kept(key);
                        if (kept == null) {
                            ExecutorStatistics.missed();
                            kept = statistics.value();
                        }
                        d = derive(kept.mean(), kept.std());
                        derived = d;
                    }
                }
            }
            return d;
        }

        @Override
        double[] inverseStd() {
            return derived()[0];
        }

        @Override
        double[] scaledMean() {
            return derived()[1];
        }

        @Override
        double[] std() {
            return derived()[2];
        }
    }
}

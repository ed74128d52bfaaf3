package org.switchml.spark.ml.linear;

import java.util.UUID;
import org.apache.spark.api.java.JavaRDD;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * The feature statistics and the label histogram of a fit through the switch: one barrier stage of
 * {@link FeatureSummary}, always in fp64 (std and histogram feed everything else), and a second one when the
 * labels outnumber the histogram's slots. Every executor keeps the mean and std under the stage's key
 * ({@link ExecutorStatistics}), for the fit's objective ({@link Standardization#kept}).
 */
final class StatisticsStage {
    private StatisticsStage() {}

    /**
     * The statistics, and the key under which the executors kept them.
     *
     * @param stats the feature statistics and the weight of each label
     * @param key   a key no other statistics stage used
     */
    record Outcome(FeatureSummary.Stats stats, String key) {}

    /**
     * Runs the statistics over {@code batches} of {@code numFeatures} features with {@code labelCapacity}
     * histogram slots (more when a label is beyond them); fails as MLlib does when no row has weight.
     *
     * @param owner prefix of the executors' keys (the estimator's uid)
     */
    static Outcome run(
            final JavaRDD<InstanceBatch> batches,
            final int numFeatures,
            final int labelCapacity,
            final SwitchUse use,
            final String owner) {
        String key = key(owner);
        FeatureSummary.Stats stats = summarize(batches, numFeatures, labelCapacity, use, key);
        if (stats.labelOverflow() > 0) {
            // more classes than slots: find the largest label, then count again
            final double maxLabel = batches.map(b -> {
                        double max = Double.NEGATIVE_INFINITY;
                        for (int r = 0; r < b.size(); r++) {
                            max = Math.max(max, b.label(r));
                        }
                        return max;
                    })
                    .reduce(Math::max);
            key = key(owner);
            stats = summarize(batches, numFeatures, (int) maxLabel + 1, use, key);
        }
        if (!(stats.weightSum() > 0)) {
            throw new IllegalArgumentException("requirement failed: Nothing has been added to this summarizer.");
        }
        return new Outcome(stats, key);
    }

    /**
     * A regression's statistics over {@code batches} of {@code numFeatures} features: the features' and the
     * label's mean and std ({@link FeatureSummary#withLabel}); fails as MLlib does when no row has weight.
     *
     * @param owner prefix of the executors' keys (the estimator's uid)
     */
    static Outcome runWithLabel(
            final JavaRDD<InstanceBatch> batches, final int numFeatures, final SwitchUse use, final String owner) {
        final String key = key(owner);
        final FeatureSummary.Stats stats = summarize(batches, FeatureSummary.withLabel(numFeatures, key), use);
        if (!(stats.weightSum() > 0)) {
            throw new IllegalArgumentException("requirement failed: Nothing has been added to this summarizer.");
        }
        return new Outcome(stats, key);
    }

    /** A key for one statistics stage's result on the executors: unique in every JVM. */
    private static String key(final String owner) {
        return owner + "/" + UUID.randomUUID();
    }

    private static FeatureSummary.Stats summarize(
            final JavaRDD<InstanceBatch> batches,
            final int numFeatures,
            final int labelCapacity,
            final SwitchUse use,
            final String key) {
        return summarize(batches, new FeatureSummary(numFeatures, labelCapacity, key), use);
    }

    private static FeatureSummary.Stats summarize(
            final JavaRDD<InstanceBatch> batches, final FeatureSummary summary, final SwitchUse use) {
        final ReplicatedLoop.Result r = ReplicatedLoop.run(
                batches.rdd(),
                summary.initialState(),
                summary.vectorLength(),
                summary,
                new ReplicatedLoop.Options(FeatureSummary.rounds(), 0, 0, SwitchMLConfig.Precision.FP64));
        use.ran(r, summary.vectorLength(), true);
        return summary.stats(r.state());
    }
}

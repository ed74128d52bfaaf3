package org.switchml.spark.ml.linear;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The feature statistics each executor's copy of the statistics stage ended with, kept in the JVM for the
 * fit that follows it. Every executor holds the same bit-identical mean and std as the driver, so the fit's
 * stages need not carry them: with 10^5 features the objective's per-feature arrays are 2.4 MB in every task
 * binary, fetched by each executor through the driver's one link. An executor that did not run the
 * statistics stage (or has evicted them) reads them from the fit's broadcast instead.
 */
final class ExecutorStatistics {
    /**
     * Fits whose statistics one JVM keeps, the most recent first: the fit running now and one beside it. Few,
     * because an entry is 16 bytes per feature (16 MB at 10^6 features) in an executor's heap; a fit whose
     * entry was evicted by others running at once reads the broadcast instead.
     */
    private static final int CAPACITY = 2;

    private static final Map<String, MeanStd> KEPT = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<String, MeanStd> eldest) {
            return size() > CAPACITY;
        }
    };

    /** Times a JVM read statistics from the broadcast because it did not keep them (tests read it). */
    private static final AtomicLong MISSES = new AtomicLong();

    private ExecutorStatistics() {}

    /** Keeps a statistics stage's result under {@code key}. */
    static synchronized void keep(final String key, final MeanStd statistics) {
        KEPT.put(key, statistics);
    }

    /** The statistics kept under {@code key}, or null. */
    static synchronized MeanStd kept(final String key) {
        return KEPT.get(key);
    }

    /** Counts a read of the statistics from elsewhere than this JVM. */
    static void missed() {
        MISSES.incrementAndGet();
    }

    /** Reads of the statistics from elsewhere than this JVM so far. */
    static long misses() {
        return MISSES.get();
    }
}

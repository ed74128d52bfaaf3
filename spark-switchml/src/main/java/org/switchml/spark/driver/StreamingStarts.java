package org.switchml.spark.driver;

import java.util.HashSet;
import java.util.Set;

/**
 * When each rank of a stage began streaming its first allreduce, as the driver heard it. It answers a task whose
 * first call had no result for the result timeout: the silence is the switch's only once every rank has streamed
 * for a whole result timeout. Before that a rank that started late (a new executor still reading lost partitions)
 * may have its packets in flight, and the call waits on.
 */
final class StreamingStarts {
    private final Set<Integer> ranks = new HashSet<>();
    private long lastStartNs;

    /** Rank {@code rank} began streaming at {@code nowNs} (System.nanoTime); a repeat changes nothing. */
    synchronized void started(final int rank, final long nowNs) {
        if (ranks.add(rank)) {
            lastStartNs = nowNs;
        }
    }

    /**
     * Whether all {@code workers} ranks stream and the last of them began at least {@code timeoutNs} before
     * {@code nowNs}.
     */
    synchronized boolean allStreamingFor(final int workers, final long timeoutNs, final long nowNs) {
        return workers > 0 && ranks.size() >= workers && nowNs - lastStartNs >= timeoutNs;
    }
}

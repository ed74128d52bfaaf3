package org.switchml.dataplane;

import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * The part of one job's slot pool that one lane owns (slots {@code s} with {@code s mod lanes == lane}),
 * with that lane's counters for the job. Touched only by the lane's thread.
 */
final class LaneJob {
    final JobSpec spec;
    final int numWorkers;
    final int k;
    final int poolSize;
    final int secret;
    final InetSocketAddress[] workers;
    private final int lanes;

    // Per (local slot, set): index = 2 * (slot / lanes) + set.
    final int[] bitmap;
    final int[] count;
    final int[] seq;
    final boolean[] used;
    final short[] exponent;
    /** Sums, k per (local slot, set). */
    final int[] sums;

    long packetsIn;
    long packetsOut;
    long retransmissions;
    /** Drops by reason ordinal (the hot path counts into an array). */
    final long[] drops = new long[DropReason.values().length];

    LaneJob(final JobSpec spec, final int lane, final int lanes) {
        this.spec = spec;
        this.numWorkers = spec.numWorkers();
        this.k = spec.k();
        this.poolSize = spec.poolSize();
        this.secret = spec.secret();
        this.workers = spec.workers().toArray(new InetSocketAddress[0]);
        this.lanes = lanes;
        final int owned = lane < poolSize ? (poolSize - lane + lanes - 1) / lanes : 0;
        this.bitmap = new int[2 * owned];
        this.count = new int[2 * owned];
        this.seq = new int[2 * owned];
        this.used = new boolean[2 * owned];
        this.exponent = new short[2 * owned];
        Arrays.fill(exponent, Wire.EXPONENT_NONE);
        this.sums = new int[2 * owned * k];
    }

    /** Index of (slot, set) in the per-set arrays. */
    int index(final int slot, final int set) {
        return 2 * (slot / lanes) + set;
    }

    /** This lane's counters of the job. */
    JobCounters counters() {
        return new JobCounters(packetsIn, packetsOut, retransmissions, DropCounts.of(r -> drops[r.ordinal()]));
    }
}

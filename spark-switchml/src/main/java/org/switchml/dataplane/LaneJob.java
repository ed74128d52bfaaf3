package org.switchml.dataplane;

import java.net.InetSocketAddress;
import java.util.Arrays;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;

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

    /** 64-bit words of a worker bitmap: one for up to 64 workers, four for 256. */
    final int words;
    /** Worker bitmaps, {@link #words} per (local slot, set), bit r of the bitmap = rank r contributed. */
    final long[] bitmap;
    // Per (local slot, set): index = 2 * (slot / lanes) + set.
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
        this.words = (numWorkers + 63) >>> 6;
        this.bitmap = new long[2 * owned * words];
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

    /** Whether no bit is set in the bitmap of (slot, set) index {@code i}. */
    boolean noContributor(final int i) {
        final int from = i * words;
        for (int w = from; w < from + words; w++) {
            if (bitmap[w] != 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether rank {@code rank} is in the bitmap of index {@code i}. */
    boolean contributed(final int i, final int rank) {
        return (bitmap[i * words + (rank >>> 6)] & (1L << rank)) != 0;
    }

    /** Makes rank {@code rank} the only contributor of index {@code i}. */
    void startUse(final int i, final int rank) {
        final int from = i * words;
        Arrays.fill(bitmap, from, from + words, 0L);
        bitmap[from + (rank >>> 6)] = 1L << rank;
    }

    /** Adds rank {@code rank} to the bitmap of index {@code i}. */
    void add(final int i, final int rank) {
        bitmap[i * words + (rank >>> 6)] |= 1L << rank;
    }

    /** Removes rank {@code rank} from the bitmap of index {@code i} (the lazy reset of the other set). */
    void remove(final int i, final int rank) {
        bitmap[i * words + (rank >>> 6)] &= ~(1L << rank);
    }

    /** This lane's counters of the job. */
    JobCounters counters() {
        return new JobCounters(packetsIn, packetsOut, retransmissions, DropCounts.of(r -> drops[r.ordinal()]));
    }
}

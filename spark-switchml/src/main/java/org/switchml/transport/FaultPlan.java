package org.switchml.transport;

/**
 * Seeded faults applied to the datagrams one endpoint sends: loss, duplication, reordering, and loss
 * of the first few packets. Off by default ({@link #NONE}); used by tests and the benchmark.
 *
 * @param loss                  probability that a datagram is dropped
 * @param duplicate             probability that a datagram is sent twice
 * @param reorder               probability that a datagram is held back, so later ones overtake it
 * @param dropFirst             number of datagrams dropped unconditionally at the start (loss in the first window)
 * @param seed                  seed of the random decisions
 * @param maxReorderDelayMicros longest a datagram is held back; each delay is drawn uniformly from 1 to this
 */
public record FaultPlan(
        double loss, double duplicate, double reorder, int dropFirst, long seed, long maxReorderDelayMicros) {

    /** Longest hold-back of a reordered datagram unless a plan says otherwise. */
    public static final long DEFAULT_MAX_REORDER_DELAY_MICROS = 2_000;

    /** No faults. */
    public static final FaultPlan NONE = new FaultPlan(0, 0, 0, 0, 0);

    public FaultPlan {
        check("loss", loss);
        check("duplicate", duplicate);
        check("reorder", reorder);
        if (dropFirst < 0) {
            throw new IllegalArgumentException("dropFirst must be >= 0, got " + dropFirst);
        }
        if (maxReorderDelayMicros < 1) {
            throw new IllegalArgumentException("maxReorderDelayMicros must be >= 1, got " + maxReorderDelayMicros);
        }
    }

    /** A plan whose reordered datagrams are held back up to {@value #DEFAULT_MAX_REORDER_DELAY_MICROS} microseconds. */
    public FaultPlan(
            final double loss, final double duplicate, final double reorder, final int dropFirst, final long seed) {
        this(loss, duplicate, reorder, dropFirst, seed, DEFAULT_MAX_REORDER_DELAY_MICROS);
    }

    private static void check(final String name, final double p) {
        if (!(p >= 0.0 && p < 1.0)) {
            throw new IllegalArgumentException(name + " probability must be in [0, 1), got " + p);
        }
    }

    /** Whether any fault is enabled. */
    public boolean active() {
        return loss > 0 || duplicate > 0 || reorder > 0 || dropFirst > 0;
    }

    /** The same plan with another seed (each endpoint gets its own random stream). */
    public FaultPlan withSeed(final long newSeed) {
        return new FaultPlan(loss, duplicate, reorder, dropFirst, newSeed, maxReorderDelayMicros);
    }

    /** The same plan holding reordered datagrams back up to {@code micros} microseconds. */
    public FaultPlan withMaxReorderDelayMicros(final long micros) {
        return new FaultPlan(loss, duplicate, reorder, dropFirst, seed, micros);
    }
}

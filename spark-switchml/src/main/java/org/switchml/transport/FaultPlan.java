package org.switchml.transport;

/**
 * Seeded faults applied to the datagrams one endpoint sends: loss, duplication, reordering, and loss
 * of the first few packets. Off by default ({@link #NONE}); used by tests and the benchmark.
 *
 * @param loss      probability that a datagram is dropped
 * @param duplicate probability that a datagram is sent twice
 * @param reorder   probability that a datagram is held back briefly, so later ones overtake it
 * @param dropFirst number of datagrams dropped unconditionally at the start (loss in the first window)
 * @param seed      seed of the random decisions
 */
public record FaultPlan(double loss, double duplicate, double reorder, int dropFirst, long seed) {

    /** No faults. */
    public static final FaultPlan NONE = new FaultPlan(0, 0, 0, 0, 0);

    public FaultPlan {
        check("loss", loss);
        check("duplicate", duplicate);
        check("reorder", reorder);
        if (dropFirst < 0) {
            throw new IllegalArgumentException("dropFirst must be >= 0, got " + dropFirst);
        }
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
        return new FaultPlan(loss, duplicate, reorder, dropFirst, newSeed);
    }
}

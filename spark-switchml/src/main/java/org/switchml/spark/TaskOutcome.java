package org.switchml.spark;

import java.io.Serializable;

/**
 * What one barrier task sends back (through the closing shuffle) to the driver. Only partition 0 carries
 * vectors, so the driver receives O(dim) per stage.
 */
final class TaskOutcome implements Serializable {
    private static final long serialVersionUID = 1L;

    static final byte OK = 0;
    /** The switch could not be reached: registration failed or no result within the timeout. */
    static final byte UNREACHABLE = 1;

    final int partition;
    final byte status;
    final String message;
    /** The sum (aggregate) or the state (loop); partition 0 only, else null. */
    final double[] vector;
    /** Loop: iterations completed in this stage, and whether the update reported convergence. */
    final int iterations;
    final boolean converged;
    /** Loop: per-iteration scalars, iteration-major, {@code scalarWidth} per iteration; partition 0 only. */
    final double[] scalars;
    final int scalarWidth;
    /** Where this task's time went (ns): see {@link StageMember#timings}. */
    long[] timings;
    static final int TIMINGS = 4;
    /** The switch job's workers (executors) in the stage; 0 when unknown. */
    int workers;

    TaskOutcome(final int partition, final byte status, final String message, final double[] vector,
                final int iterations, final boolean converged, final double[] scalars, final int scalarWidth) {
        this.partition = partition;
        this.status = status;
        this.message = message;
        this.vector = vector;
        this.iterations = iterations;
        this.converged = converged;
        this.scalars = scalars;
        this.scalarWidth = scalarWidth;
    }

    static TaskOutcome unreachable(final int partition, final String message) {
        return new TaskOutcome(partition, UNREACHABLE, message, null, 0, false, null, 0);
    }

    static TaskOutcome ok(final int partition, final double[] vector) {
        return new TaskOutcome(partition, OK, "", vector, 0, false, null, 0);
    }
}

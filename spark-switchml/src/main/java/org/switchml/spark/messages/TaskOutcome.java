package org.switchml.spark.messages;

import java.io.Serializable;

/**
 * What one barrier task sends back to the driver as the stage's result. Only partition 0 carries vectors,
 * so the driver receives O(dim) per stage.
 */
public final class TaskOutcome implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final byte OK = 0;
    /** The switch could not be reached: registration failed or no result within the timeout. */
    public static final byte UNREACHABLE = 1;

    public final int partition;
    public final byte status;
    public final String message;
    /** The sum (aggregate) or the state (loop); partition 0 only, else null. */
    public final double[] vector;
    /** Loop: iterations completed in this stage, and whether the update reported convergence. */
    public final int iterations;

    public final boolean converged;
    /** Loop: per-iteration scalars, iteration-major, {@code scalarWidth} per iteration; partition 0 only. */
    public final double[] scalars;

    public final int scalarWidth;
    /** Where this task's time went (ns): see the executor side's StageMember.timings. */
    public long[] timings;

    public static final int TIMINGS = 4;
    /** The switch job's workers (executors) in the stage; 0 when unknown. */
    public int workers;
    /** Whether the stage's one executor computed the switch's sum itself, sending no packet. */
    public boolean inMemory;
    /** The switches (shards) the stage's job was split among; 0 when none took part. */
    public int shards;

    public TaskOutcome(
            final int partition,
            final byte status,
            final String message,
            final double[] vector,
            final int iterations,
            final boolean converged,
            final double[] scalars,
            final int scalarWidth) {
        this.partition = partition;
        this.status = status;
        this.message = message;
        this.vector = vector;
        this.iterations = iterations;
        this.converged = converged;
        this.scalars = scalars;
        this.scalarWidth = scalarWidth;
    }

    public static TaskOutcome unreachable(final int partition, final String message) {
        return new TaskOutcome(partition, UNREACHABLE, message, null, 0, false, null, 0);
    }

    public static TaskOutcome ok(final int partition, final double[] vector) {
        return new TaskOutcome(partition, OK, "", vector, 0, false, null, 0);
    }
}

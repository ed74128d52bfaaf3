package org.switchml.spark.messages;

import java.io.Serializable;
import java.util.function.Function;
import org.apache.spark.SparkContext;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * The settings one barrier stage attempt needs, resolved once on the driver and shipped in the stage's
 * closure (not per iteration).
 *
 * @param jobId             the switch job
 * @param generation        the attempt number; a retried stage registers a new generation
 * @param tasks             barrier tasks in the stage
 * @param k                 {@code spark.switchml.k}, or 0 to follow the path (MTU, switch kind)
 * @param poolSize          {@code spark.switchml.poolSize}, or 0 for the automatic size
 * @param fp64              FP64_SPLIT (else FP32_BLOCK) for {@code double[]}
 * @param resultTimeoutMs   bound on the wait for a switch result
 * @param startTimeoutMs    bound on the wait for the stage's other tasks and executors to be ready
 * @param killPollMs        how often a task checks whether Spark killed it
 * @param mayShard          whether a stage of two or more executors may run on the executors' switch shards
 *                          ({@code spark.switchml.switch.placement} of the call is not {@code driver})
 * @param exactSums         each source partition's vector quantized on its own and an executor's partitions summed
 *                          as integers ({@code spark.switchml.exactSums}), else in floating point
 */
public record TaskSettings(
        int jobId,
        int generation,
        int tasks,
        int k,
        int poolSize,
        boolean fp64,
        long resultTimeoutMs,
        long startTimeoutMs,
        long killPollMs,
        boolean mayShard,
        boolean exactSums)
        implements Serializable {

    /** Settings of a call that may run on the executors' shards, with exact sums. */
    public TaskSettings(
            final int jobId,
            final int generation,
            final int tasks,
            final int k,
            final int poolSize,
            final boolean fp64,
            final long resultTimeoutMs,
            final long startTimeoutMs,
            final long killPollMs) {
        this(jobId, generation, tasks, k, poolSize, fp64, resultTimeoutMs, startTimeoutMs, killPollMs, true, true);
    }

    /**
     * Settings of attempt {@code generation} of job {@code jobId} with {@code tasks} tasks, summing in
     * {@code precision} (null: as configured for the call).
     */
    public static TaskSettings resolve(
            final SparkContext sc,
            final int jobId,
            final int generation,
            final int tasks,
            final SwitchMLConfig.Precision precision) {
        final Function<String, String> s = SwitchMLConfig.forCall(sc);
        final SwitchMLConfig.Precision p = precision != null ? precision : SwitchMLConfig.PRECISION.from(s);
        final boolean fp64 = p == SwitchMLConfig.Precision.FP64;
        final int k = SwitchMLConfig.K.from(s);
        if (fp64 && k > 0 && k % 2 != 0) {
            throw new IllegalArgumentException(SwitchMLConfig.K.key() + "=" + k + " must be even with "
                    + SwitchMLConfig.PRECISION.key() + "=fp64 (two lanes per element)");
        }
        return new TaskSettings(
                jobId,
                generation,
                tasks,
                k,
                SwitchMLConfig.POOL_SIZE.from(s),
                fp64,
                SwitchMLConfig.RESULT_TIMEOUT.from(s),
                SwitchMLConfig.START_TIMEOUT.from(s),
                SwitchMLConfig.KILL_POLL_INTERVAL.from(s),
                SwitchMLConfig.PLACEMENT.from(s) != SwitchMLConfig.Placement.DRIVER,
                SwitchMLConfig.EXACT_SUMS.from(s));
    }

    /** Identifies this stage attempt in the rendezvous. */
    public String stageKey() {
        return Integer.toUnsignedString(jobId) + "." + generation;
    }
}

package org.switchml.spark;

import java.util.List;
import java.util.Optional;
import org.apache.spark.SparkContext;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StageLauncher;

/**
 * What an application's driver can learn about the switch its calls go through: the switch's name, the
 * counters of a switch job (each call's {@code jobId}), and how many calls fell back. For reports and
 * diagnostics; the calls themselves are {@link SwitchMLAggregator} and {@link ReplicatedLoop}.
 */
public final class SwitchMLDriver {
    private final DriverRuntime runtime;

    private SwitchMLDriver(final DriverRuntime runtime) {
        this.runtime = runtime;
    }

    /**
     * The driver side of {@code sc}'s application: the plugin's, or, for a local master without the plugin,
     * an embedded switch started on first use.
     */
    public static SwitchMLDriver of(final SparkContext sc) {
        return new SwitchMLDriver(DriverRuntimes.forContext(sc));
    }

    /**
     * Why no switch call can run in {@code sc}'s application, naming the setting, or empty when they can. Every
     * call runs barrier stages, and Spark refuses those whenever dynamic allocation is in effect:
     * {@code spark.dynamicAllocation.enabled=true} with any master but {@code local[...]} ({@code local-cluster}
     * included), whatever the other dynamic-allocation settings say. Then {@link SwitchMLAggregator} falls back
     * as {@code spark.switchml.fallback} says, {@link ReplicatedLoop} fails, and the estimators train with stock
     * MLlib.
     */
    public static Optional<String> barrierStagesRefused(final SparkContext sc) {
        return StageLauncher.barrierStagesRefused(sc.conf())
                ? Optional.of(StageLauncher.dynamicAllocationReason())
                : Optional.empty();
    }

    /** The switch's dataplane address, or what is tried while it is unreachable. */
    public String switchName() {
        return runtime.switchName();
    }

    /** Whether the switch reports per-job counters (the embedded software switch does). */
    public boolean countsJobs() {
        final var r = runtime.registrar();
        return r != null && r.countsJobs();
    }

    /** The counters of a job still installed (a running stage), when the switch reports them. */
    public Optional<JobCounters> liveCounters(final int jobId) {
        final var r = runtime.registrar();
        return r == null ? Optional.empty() : r.counters(jobId);
    }

    /** The final counters of a finished job, when the switch reports them (waits for its removal, at most 10 s). */
    public Optional<JobCounters> finalCounters(final int jobId) {
        return Optional.ofNullable(runtime.finalCounters(jobId));
    }

    /** The job generations a call's job was installed under, in order (one per barrier stage attempt). */
    public List<Integer> generationsOf(final int jobId) {
        return runtime.generationsOf(jobId);
    }

    /**
     * How many calls fell back to treeAggregate: the switch was unreachable, or Spark refused their barrier
     * stages because {@code spark.dynamicAllocation.enabled=true} (see {@link #barrierStagesRefused}).
     */
    public long fallbackCount() {
        return runtime.fallbackCount();
    }
}

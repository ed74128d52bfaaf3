package org.switchml.spark.registrar;

import java.util.Optional;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;

/**
 * The control plane the driver uses to install jobs on a switch: a shared switch's job service
 * ({@link JobServiceRegistrar}), the embedded software switch ({@link EmbeddedSwitchRegistrar}, which runs the
 * same service in the driver), or a class named in {@code spark.switchml.registrar}. Implementations are called
 * from several threads and must be thread-safe.
 *
 * <p>An external implementation needs a public constructor {@code (SwitchAddress, Map<String,String>)}
 * receiving the dataplane address and the Spark settings. The constructor may fail when the switch
 * cannot be reached; the driver then falls back and tries again later.
 */
public interface JobRegistrar extends AutoCloseable {
    /** Where workers send contributions. */
    SwitchAddress address();

    /**
     * Installs {@code spec}, replacing any job with the same id (a new generation resets its slots), and
     * returns the spec as installed (the switch may fill in fields such as a secret).
     *
     * @throws RuntimeException when the switch cannot be reached; the caller then falls back or fails
     */
    JobSpec register(JobSpec spec);

    /** Removes a job; unknown ids are ignored. */
    void remove(int jobId);

    /** The job ids this registrar may install. */
    default JobIds jobIds() {
        return JobIds.ANY;
    }

    /** The only k this switch accepts, or 0 when any k fits (the software switch). */
    default int requiredK() {
        return 0;
    }

    /** Most workers (executors) one job may have on this switch. */
    default int maxWorkers() {
        return Wire.MAX_WORKERS;
    }

    /**
     * MTU of the interface the switch's dataplane listens on, when this registrar can tell (0: unknown); k
     * then follows it.
     */
    default int dataplaneMtu() {
        return 0;
    }

    /** Whether {@link #counters} reports every job's counters (the embedded switch does). */
    default boolean countsJobs() {
        return false;
    }

    /** The counters of an installed job, when this registrar can read them. */
    default Optional<JobCounters> counters(final int jobId) {
        return Optional.empty();
    }

    /** False once the control connection is known to be lost (the driver then reconnects). */
    default boolean reachable() {
        return true;
    }

    /** Releases the switch (an embedded one stops). */
    @Override
    void close();
}

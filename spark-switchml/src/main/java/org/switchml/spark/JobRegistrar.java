package org.switchml.spark;

import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;

/**
 * The control plane the driver uses to install jobs on a switch. The embedded software switch has its
 * own ({@link EmbeddedSwitchRegistrar}); an external switch needs one named by
 * {@code spark.switchml.registrar} (a P4Runtime controller, later). Implementations are called from
 * Spark RPC threads and must be thread-safe.
 *
 * <p>An external implementation needs a public constructor {@code (SwitchAddress, Map<String,String>)}
 * receiving the dataplane address and the {@code spark.switchml.*} settings.
 */
public interface JobRegistrar extends AutoCloseable {
    /** Where workers send contributions. */
    SwitchAddress address();

    /**
     * Installs {@code spec}, replacing any job with the same id (a new registration resets its slots).
     *
     * @return the spec as installed: a P4Runtime controller gives every registration a fresh secret, and the
     *         workers must use the returned spec
     * @throws RuntimeException when the switch cannot be reached; the caller then falls back or fails
     */
    JobSpec register(JobSpec spec);

    /** Removes a job; unknown ids are ignored. */
    void remove(int jobId);

    /** Releases the switch (an embedded one stops). */
    @Override
    void close();
}

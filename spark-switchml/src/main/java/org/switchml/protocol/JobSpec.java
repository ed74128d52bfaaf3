package org.switchml.protocol;

import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.List;

/**
 * What a switch must know about one aggregation job (docs/protocol.md, section 4).
 *
 * <p>A registration is identified by (job id, generation, secret): every packet of the job carries all
 * three, and the switch drops a packet whose secret is not the registered one before it looks at anything
 * else of the job. A P4Runtime controller draws a fresh secret at every registration
 * ({@code SwitchController.registerJob} returns the spec it installed); workers must use that spec.
 *
 * @param jobId      job identifier (unsigned 32 bits)
 * @param generation attempt number, 0..65535; a retried attempt uses a new one
 * @param secret     the registration's secret (any 32-bit value); only the job's workers may know it
 * @param k          int32 elements per packet
 * @param poolSize   slots reserved for the job (S)
 * @param workers    the UDP endpoint of each rank; its size is the number of workers n
 */
public record JobSpec(int jobId, int generation, int secret, int k, int poolSize, List<InetSocketAddress> workers) {

    /** Largest pool one job may ask for (the slot field is 16 bits). */
    public static final int MAX_POOL_SIZE = 1 << 16;

    private static final SecureRandom SECRETS = new SecureRandom();

    public JobSpec {
        workers = List.copyOf(workers);
        if (generation < 0 || generation > 0xFFFF) {
            throw new IllegalArgumentException(
                    "job " + Integer.toUnsignedString(jobId) + ": generation must be 0..65535, got " + generation);
        }
        if (k < 1 || k > Wire.MAX_K) {
            throw new IllegalArgumentException(
                    "job " + Integer.toUnsignedString(jobId) + ": k must be 1.." + Wire.MAX_K + ", got " + k);
        }
        if (poolSize < 1 || poolSize > MAX_POOL_SIZE) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId) + ": pool size must be 1.."
                    + MAX_POOL_SIZE + ", got " + poolSize);
        }
        if (workers.isEmpty() || workers.size() > Wire.MAX_WORKERS) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": number of workers must be 1.." + Wire.MAX_WORKERS + ", got " + workers.size());
        }
        for (int r = 0; r < workers.size(); r++) {
            final InetSocketAddress w = workers.get(r);
            if (w == null || w.isUnresolved() || w.getPort() == 0) {
                throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId) + ": rank " + r
                        + " has no resolved address with a port: " + w);
            }
            if (workers.indexOf(w) != r) {
                throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId) + ": ranks "
                        + workers.indexOf(w) + " and " + r + " share the address " + w);
            }
        }
    }

    /**
     * A spec with a freshly drawn random secret, for a job registered directly with an embedded switch.
     * Every worker must then use this very spec (or one with the same secret).
     */
    public JobSpec(
            final int jobId,
            final int generation,
            final int k,
            final int poolSize,
            final List<InetSocketAddress> workers) {
        this(jobId, generation, randomSecret(), k, poolSize, workers);
    }

    /** A secret from a cryptographically strong generator. */
    public static int randomSecret() {
        return SECRETS.nextInt();
    }

    /** The same job with another secret (a new registration of it). */
    public JobSpec withSecret(final int newSecret) {
        return new JobSpec(jobId, generation, newSecret, k, poolSize, workers);
    }

    /** Whether {@code other} names the same registration: same job id, generation and secret. */
    public boolean sameRegistration(final JobSpec other) {
        return other != null && other.jobId == jobId && other.generation == generation && other.secret == secret;
    }

    /** Number of workers n. */
    public int numWorkers() {
        return workers.size();
    }

    /** The job id as an unsigned decimal string, for messages. */
    public String jobName() {
        return Integer.toUnsignedString(jobId);
    }

    /** Every field but the secret, which must not end up in logs. */
    @Override
    public String toString() {
        return "JobSpec[jobId=" + jobName() + ", generation=" + generation + ", secret=(hidden), k=" + k + ", poolSize="
                + poolSize + ", workers=" + workers + "]";
    }
}

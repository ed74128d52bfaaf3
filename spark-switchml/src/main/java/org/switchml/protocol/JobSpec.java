package org.switchml.protocol;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What a switch must know about one aggregation job (docs/protocol.md, section 4).
 *
 * @param jobId      job identifier (unsigned 32 bits)
 * @param generation attempt number, 0..65535; a retried attempt uses a new one
 * @param k          int32 elements per packet
 * @param poolSize   slots reserved for the job (S)
 * @param workers    the UDP endpoint of each rank; its size is the number of workers n
 */
public record JobSpec(int jobId, int generation, int k, int poolSize, List<InetSocketAddress> workers) {

    /** Largest pool one job may ask for (the slot field is 16 bits). */
    public static final int MAX_POOL_SIZE = 1 << 16;

    public JobSpec {
        workers = List.copyOf(workers);
        if (generation < 0 || generation > 0xFFFF) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": generation must be 0..65535, got " + generation);
        }
        if (k < 1 || k > Wire.MAX_K) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": k must be 1.." + Wire.MAX_K + ", got " + k);
        }
        if (poolSize < 1 || poolSize > MAX_POOL_SIZE) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": pool size must be 1.." + MAX_POOL_SIZE + ", got " + poolSize);
        }
        if (workers.isEmpty() || workers.size() > Wire.MAX_WORKERS) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": number of workers must be 1.." + Wire.MAX_WORKERS + ", got " + workers.size());
        }
        for (int r = 0; r < workers.size(); r++) {
            final InetSocketAddress w = workers.get(r);
            if (w == null || w.isUnresolved() || w.getPort() == 0) {
                throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                        + ": rank " + r + " has no resolved address with a port: " + w);
            }
            if (workers.indexOf(w) != r) {
                throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                        + ": ranks " + workers.indexOf(w) + " and " + r + " share the address " + w);
            }
        }
    }

    /** Number of workers n. */
    public int numWorkers() {
        return workers.size();
    }

    /** The job id as an unsigned decimal string, for messages. */
    public String jobName() {
        return Integer.toUnsignedString(jobId);
    }
}

package org.switchml.spark;

import org.switchml.protocol.JobSpec;

import java.io.Serializable;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's shape as plain serializable data (endpoints as {@code ip:port} strings), and the endpoint
 * text format used in the rendezvous messages.
 *
 * @param jobId      job id
 * @param generation attempt number
 * @param k          int32 elements per packet
 * @param poolSize   slots
 * @param endpoints  {@code ip:port} of each rank
 */
record RegisterJob(int jobId, int generation, int k, int poolSize, String[] endpoints) implements Serializable {
    private static final long serialVersionUID = 1L;

    static RegisterJob of(final JobSpec spec) {
        final String[] e = new String[spec.numWorkers()];
        for (int r = 0; r < e.length; r++) {
            e[r] = endpoint(spec.workers().get(r));
        }
        return new RegisterJob(spec.jobId(), spec.generation(), spec.k(), spec.poolSize(), e);
    }

    /** The job spec this message describes (its secret is drawn by the registration). */
    JobSpec toSpec() {
        final List<InetSocketAddress> w = new ArrayList<>(endpoints.length);
        for (final String s : endpoints) {
            w.add(parseEndpoint(s));
        }
        return new JobSpec(jobId, generation, k, poolSize, w);
    }

    static String endpoint(final InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    static InetSocketAddress parseEndpoint(final String s) {
        final int c = s.lastIndexOf(':');
        return new InetSocketAddress(s.substring(0, c), Integer.parseInt(s.substring(c + 1)));
    }
}

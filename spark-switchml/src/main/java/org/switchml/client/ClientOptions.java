package org.switchml.client;

import org.switchml.transport.FaultPlan;

/**
 * How a worker's {@link SwitchMLClient} behaves.
 *
 * @param bindHost              local address of the worker socket
 * @param bindPort              local port; 0 picks a free one
 * @param fp64                  aggregate {@code double[]} with the FP64_SPLIT encoding (two lanes per element)
 * @param retransmitTimeoutMs   retransmission timeout before any round trip was measured; afterwards the
 *                              timeout follows the measured round trips; it doubles on every retry
 * @param maxRetransmitTimeoutMs ceiling of the backoff
 * @param resultTimeoutMs       bound on the wait: a call fails when no result arrives for this long
 * @param faults                faults applied to what this worker sends
 */
public record ClientOptions(String bindHost, int bindPort, boolean fp64, long retransmitTimeoutMs,
                            long maxRetransmitTimeoutMs, long resultTimeoutMs, FaultPlan faults) {

    /** Default first retransmission timeout. */
    public static final long DEFAULT_RETRANSMIT_TIMEOUT_MS = 20;
    /** Default backoff ceiling. */
    public static final long DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS = 500;
    /** Default bound on the wait for a result. */
    public static final long DEFAULT_RESULT_TIMEOUT_MS = 30_000;

    public ClientOptions {
        if (bindPort < 0 || bindPort > 65535) {
            throw new IllegalArgumentException("bind port must be 0..65535, got " + bindPort);
        }
        if (retransmitTimeoutMs < 1 || maxRetransmitTimeoutMs < retransmitTimeoutMs) {
            throw new IllegalArgumentException("need 1 <= retransmit timeout (" + retransmitTimeoutMs
                    + " ms) <= max retransmit timeout (" + maxRetransmitTimeoutMs + " ms)");
        }
        if (resultTimeoutMs < 1) {
            throw new IllegalArgumentException("result timeout must be >= 1 ms, got " + resultTimeoutMs);
        }
        if (faults == null) {
            faults = FaultPlan.NONE;
        }
    }

    /** Loopback, free port, FP32_BLOCK, default timeouts, no faults. */
    public static ClientOptions defaults() {
        return new ClientOptions("127.0.0.1", 0, false, DEFAULT_RETRANSMIT_TIMEOUT_MS,
                DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS, DEFAULT_RESULT_TIMEOUT_MS, FaultPlan.NONE);
    }

    public ClientOptions withBindHost(final String host) {
        return new ClientOptions(host, bindPort, fp64, retransmitTimeoutMs, maxRetransmitTimeoutMs, resultTimeoutMs, faults);
    }

    public ClientOptions withFp64(final boolean on) {
        return new ClientOptions(bindHost, bindPort, on, retransmitTimeoutMs, maxRetransmitTimeoutMs, resultTimeoutMs, faults);
    }

    public ClientOptions withResultTimeoutMs(final long ms) {
        return new ClientOptions(bindHost, bindPort, fp64, retransmitTimeoutMs, maxRetransmitTimeoutMs, ms, faults);
    }

    public ClientOptions withRetransmitTimeoutMs(final long first, final long max) {
        return new ClientOptions(bindHost, bindPort, fp64, first, max, resultTimeoutMs, faults);
    }

    public ClientOptions withFaults(final FaultPlan plan) {
        return new ClientOptions(bindHost, bindPort, fp64, retransmitTimeoutMs, maxRetransmitTimeoutMs, resultTimeoutMs, plan);
    }
}

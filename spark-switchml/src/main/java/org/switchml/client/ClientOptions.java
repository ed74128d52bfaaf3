package org.switchml.client;

import org.switchml.transport.FaultPlan;

/**
 * How a worker's {@link SwitchMLClient} behaves.
 *
 * <p>Retransmission (docs/design.md, "Loss recovery"): a packet is sent again when its result has not
 * come within the retransmission timeout, which starts at {@code retransmitTimeoutMs} and then follows the
 * measured round trips (smoothed RTT plus four deviations, at least 1.5 round trips), never below
 * {@code minRetransmitTimeoutMs}. Random loss does not grow it; it backs off (doubling, up to
 * {@code maxRetransmitTimeoutMs}) while no result at all arrives, while no packet is answered at its first
 * transmission (Karn), or for a packet sent again many times in a row.
 *
 * @param bindHost               local address of the worker socket
 * @param bindPort               local port; 0 picks a free one
 * @param fp64                   aggregate {@code double[]} with the FP64_SPLIT encoding (two lanes per element)
 * @param minRetransmitTimeoutMs floor of the retransmission timeout once round trips are measured
 * @param retransmitTimeoutMs    retransmission timeout before any round trip was measured
 * @param maxRetransmitTimeoutMs ceiling of the timeout and its backoff
 * @param resultTimeoutMs        bound on the wait: a call fails when no result arrives for this long
 * @param faults                 faults applied to what this worker sends
 */
public record ClientOptions(
        String bindHost,
        int bindPort,
        boolean fp64,
        long minRetransmitTimeoutMs,
        long retransmitTimeoutMs,
        long maxRetransmitTimeoutMs,
        long resultTimeoutMs,
        FaultPlan faults) {

    /** Default floor of the measured retransmission timeout: the granularity of the retransmission timer. */
    public static final long DEFAULT_MIN_RETRANSMIT_TIMEOUT_MS = 1;
    /** Default first retransmission timeout. */
    public static final long DEFAULT_RETRANSMIT_TIMEOUT_MS = 20;
    /** Default backoff ceiling. */
    public static final long DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS = 500;
    /** Default bound on the wait for a result. */
    public static final long DEFAULT_RESULT_TIMEOUT_MS = 30_000;

    /** Validates the settings; a null {@code faults} means no faults. */
    public ClientOptions {
        if (bindPort < 0 || bindPort > 65535) {
            throw new IllegalArgumentException("bind port must be 0..65535, got " + bindPort);
        }
        if (minRetransmitTimeoutMs < 1
                || retransmitTimeoutMs < minRetransmitTimeoutMs
                || maxRetransmitTimeoutMs < retransmitTimeoutMs) {
            throw new IllegalArgumentException("need 1 <= min retransmit timeout (" + minRetransmitTimeoutMs
                    + " ms) <= retransmit timeout (" + retransmitTimeoutMs + " ms) <= max retransmit timeout ("
                    + maxRetransmitTimeoutMs + " ms)");
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
        return new ClientOptions(
                "127.0.0.1",
                0,
                false,
                DEFAULT_MIN_RETRANSMIT_TIMEOUT_MS,
                DEFAULT_RETRANSMIT_TIMEOUT_MS,
                DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS,
                DEFAULT_RESULT_TIMEOUT_MS,
                FaultPlan.NONE);
    }

    /** The same options bound to {@code host}. */
    public ClientOptions withBindHost(final String host) {
        return new ClientOptions(
                host,
                bindPort,
                fp64,
                minRetransmitTimeoutMs,
                retransmitTimeoutMs,
                maxRetransmitTimeoutMs,
                resultTimeoutMs,
                faults);
    }

    /** The same options with fp64 ({@code double[]} as FP64_SPLIT) on or off. */
    public ClientOptions withFp64(final boolean on) {
        return new ClientOptions(
                bindHost,
                bindPort,
                on,
                minRetransmitTimeoutMs,
                retransmitTimeoutMs,
                maxRetransmitTimeoutMs,
                resultTimeoutMs,
                faults);
    }

    /** The same options with another result timeout. */
    public ClientOptions withResultTimeoutMs(final long ms) {
        return new ClientOptions(
                bindHost,
                bindPort,
                fp64,
                minRetransmitTimeoutMs,
                retransmitTimeoutMs,
                maxRetransmitTimeoutMs,
                ms,
                faults);
    }

    /**
     * The same options with the first retransmission timeout {@code first} and the ceiling {@code max}; the
     * floor is the default one (or {@code first}, when that is smaller).
     */
    public ClientOptions withRetransmitTimeoutMs(final long first, final long max) {
        return withRetransmitTimeoutsMs(Math.min(DEFAULT_MIN_RETRANSMIT_TIMEOUT_MS, first), first, max);
    }

    /**
     * The same options with every retransmission setting: floor {@code min}, first timeout {@code first},
     * ceiling {@code max}. {@code min == first == max} fixes the timeout (e.g. a test that must see no
     * retransmission at all).
     */
    public ClientOptions withRetransmitTimeoutsMs(final long min, final long first, final long max) {
        return new ClientOptions(bindHost, bindPort, fp64, min, first, max, resultTimeoutMs, faults);
    }

    /** The same options with another fault plan. */
    public ClientOptions withFaults(final FaultPlan plan) {
        return new ClientOptions(
                bindHost,
                bindPort,
                fp64,
                minRetransmitTimeoutMs,
                retransmitTimeoutMs,
                maxRetransmitTimeoutMs,
                resultTimeoutMs,
                plan);
    }
}

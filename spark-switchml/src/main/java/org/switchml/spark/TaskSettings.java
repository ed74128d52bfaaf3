package org.switchml.spark;

import org.apache.spark.SparkContext;
import org.switchml.client.ClientOptions;

import java.io.Serializable;
import java.util.function.Function;

/**
 * The per-call settings a barrier task needs, resolved once on the driver and shipped in the stage's
 * closure (not per iteration).
 */
record TaskSettings(int jobId, int k, int poolSize, boolean fp64, long resultTimeoutMs, long retransmitTimeoutMs,
                    long killPollMs, String workerHost) implements Serializable {

    static TaskSettings resolve(final SparkContext sc, final int jobId) {
        final Function<String, String> s = SwitchMLConfig.forCall(sc);
        final boolean fp64 = SwitchMLConfig.PRECISION.from(s) == SwitchMLConfig.Precision.FP64;
        final int k = SwitchMLConfig.K.from(s);
        if (fp64 && k % 2 != 0) {
            throw new IllegalArgumentException(SwitchMLConfig.K.key() + "=" + k + " must be even with "
                    + SwitchMLConfig.PRECISION.key() + "=fp64 (two lanes per element)");
        }
        return new TaskSettings(jobId, k, SwitchMLConfig.POOL_SIZE.from(s), fp64,
                SwitchMLConfig.RESULT_TIMEOUT.from(s), SwitchMLConfig.RETRANSMIT_TIMEOUT.from(s),
                SwitchMLConfig.KILL_POLL_INTERVAL.from(s), SwitchMLConfig.WORKER_HOST.from(s));
    }

    ClientOptions clientOptions(final String host) {
        return ClientOptions.defaults().withBindHost(host).withFp64(fp64).withResultTimeoutMs(resultTimeoutMs)
                .withRetransmitTimeoutMs(retransmitTimeoutMs,
                        Math.max(retransmitTimeoutMs, ClientOptions.DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS));
    }
}

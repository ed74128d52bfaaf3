package org.switchml.spark.shard;

import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.transport.FaultPlan;

/**
 * One executor's switch shard: a {@link SoftwareSwitch} bound to the executor's worker address, for the life of the
 * application. The parts of sharded stages are installed from the stage's plan (the driver drew each part's
 * secret) and retired a while after the stage ends here: another executor may still be waiting for a lost result
 * of this shard, which only the installed part can resend.
 */
public final class ExecutorShard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorShard.class);

    private final SoftwareSwitch sw;
    /** The part of each job id installed here (the registration this shard serves). */
    private final Map<Integer, JobSpec> installed = new ConcurrentHashMap<>();

    private final ScheduledExecutorService retirements = Executors.newSingleThreadScheduledExecutor(r -> {
        final Thread t = new Thread(r, "switchml-shard-retire");
        t.setDaemon(true);
        return t;
    });

    private ExecutorShard(final SoftwareSwitch sw) {
        this.sw = sw;
    }

    /**
     * Starts a shard with {@code lanes} lanes on free ports of {@code host}.
     *
     * @throws org.switchml.protocol.SwitchMLException when it cannot bind
     */
    public static ExecutorShard start(final String host, final int lanes) {
        return new ExecutorShard(
                SoftwareSwitch.start(new SwitchOptions(host, Collections.nCopies(lanes, 0), false, FaultPlan.NONE)));
    }

    /** Where the workers send this shard's part of a vector. */
    public SwitchAddress address() {
        return sw.address();
    }

    /**
     * Installs this shard's part of a stage's job; installing the same part again changes nothing (every task of
     * the executor may ask). A part of another registration of the same job id replaces the one installed.
     */
    public void install(final JobSpec part) {
        final JobSpec before = installed.put(part.jobId(), part);
        if (sw.registerJob(part)) {
            LOG.debug(
                    "spark-switchml: shard {} installed job {} generation {} ({} workers, pool {}){}",
                    sw.address(),
                    part.jobName(),
                    part.generation(),
                    part.numWorkers(),
                    part.poolSize(),
                    before == null ? "" : ", replacing generation " + before.generation());
        }
    }

    /** The counters of {@code part} when it is the registration installed here, else null. */
    public JobCounters counters(final JobSpec part) {
        return part.equals(installed.get(part.jobId())) ? sw.counters(part.jobId()) : null;
    }

    /**
     * Removes {@code part} after {@code delayMs}, unless another registration of its job id was installed
     * meanwhile: until then this shard still answers a worker that lost one of its results.
     */
    public void retire(final JobSpec part, final long delayMs) {
        try {
            retirements.schedule(
                    () -> {
                        if (installed.remove(part.jobId(), part)) {
                            sw.removeJob(part.jobId());
                        }
                    },
                    delayMs,
                    TimeUnit.MILLISECONDS);
        } catch (final java.util.concurrent.RejectedExecutionException e) {
            // Closing: the switch goes with every job.
        }
    }

    /** Whether {@code part} is the registration of its job id installed here. */
    public boolean serves(final JobSpec part) {
        return part.equals(installed.get(part.jobId()));
    }

    @Override
    public void close() {
        retirements.shutdownNow();
        sw.close();
    }
}

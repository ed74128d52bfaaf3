package org.switchml.spark;

import org.apache.spark.BarrierTaskContext;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.client.SwitchMLTimeoutException;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchMLException;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One barrier task's membership in a switch job: its worker socket, the rank exchange (one allGather),
 * the registration (by partition 0, through the driver), and allreduce calls.
 *
 * <p>Spark marks a killed barrier task without interrupting it by default, so a watchdog polls
 * {@link BarrierTaskContext#isInterrupted()} and closes the socket: the allreduce then fails at once
 * and the killed attempt frees its slot instead of waiting for the result timeout.
 */
final class BarrierChannel implements AutoCloseable {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        final Thread t = new Thread(r, "switchml-kill-watchdog");
        t.setDaemon(true);
        return t;
    });

    private final BarrierTaskContext ctx;
    private final SwitchMLClient client;
    private final ScheduledFuture<?> watch;
    private volatile boolean killed;
    private JobSession session;

    private BarrierChannel(final BarrierTaskContext ctx, final SwitchMLClient client, final long pollMs) {
        this.ctx = ctx;
        this.client = client;
        this.watch = WATCHDOG.scheduleAtFixedRate(this::poll, pollMs, pollMs, TimeUnit.MILLISECONDS);
    }

    private void poll() {
        if (!killed && ctx.isInterrupted()) {
            killed = true;
            client.close();
        }
    }

    /**
     * Opens the socket, exchanges endpoints, has the job registered under generation = stage attempt number
     * (every task asks the driver; the first ask registers, the others get the same registration back, with
     * the secret it drew), and joins.
     *
     * @throws SwitchUnreachableException when registration failed
     */
    static BarrierChannel open(final BarrierTaskContext ctx, final TaskSettings s) {
        final ExecutorRuntime rt = ExecutorRuntime.get();
        final int p = ctx.partitionId();
        final String host = s.workerHost().isEmpty() ? hostOf(ctx.getTaskInfos()[p].address()) : s.workerHost();
        final BarrierChannel ch = new BarrierChannel(ctx, SwitchMLClient.open(s.clientOptions(host)), s.killPollMs());
        try {
            final String[] endpoints = ctx.allGather(RegisterJob.endpoint(ch.client.localAddress()));
            final List<InetSocketAddress> workers = new ArrayList<>(endpoints.length);
            for (final String e : endpoints) {
                workers.add(RegisterJob.parseEndpoint(e));
            }
            // A retried stage attempt registers a new generation; every registration also draws a new secret,
            // which the switch checks: packets of a dead attempt, or forged ones, never reach the job's slots.
            // Every task needs that secret, so every task asks (one RPC each, no further barrier round: Spark's
            // barrier wakes its waiters only about once a second); the driver registers once per attempt.
            final JobSpec requested = new JobSpec(s.jobId(), ctx.stageAttemptNumber() & 0xFFFF, 0, s.k(), s.poolSize(),
                    workers);
            final JobSpec spec;
            try {
                spec = rt.register(requested);
            } catch (final RuntimeException e) {
                throw new SwitchUnreachableException("job " + requested.jobName() + ": registration on switch "
                        + rt.switchAddress() + " failed: " + e, e);
            }
            ch.session = ch.client.join(spec, p, rt.switchAddress());
            return ch;
        } catch (final RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Allreduces {@code v}; a timeout means the switch is unreachable, unless this task was killed. */
    double[] allReduce(final double[] v) {
        try {
            return session.allReduce(v);
        } catch (final SwitchMLTimeoutException e) {
            ctx.killTaskIfInterrupted();
            throw new SwitchUnreachableException(e.getMessage(), e);
        } catch (final SwitchMLException e) {
            ctx.killTaskIfInterrupted(); // the watchdog closed the socket: report the kill, not the symptom
            throw e;
        }
    }

    private static String hostOf(final String hostPort) {
        final int c = hostPort.lastIndexOf(':');
        return c < 0 ? hostPort : hostPort.substring(0, c);
    }

    @Override
    public void close() {
        watch.cancel(false);
        client.close();
    }
}

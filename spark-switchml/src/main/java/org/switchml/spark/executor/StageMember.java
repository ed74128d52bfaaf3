package org.switchml.spark.executor;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.Partition;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.messages.Endpoints;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;

/**
 * One barrier task's part in a stage: it says hello to the driver, gets the plan (which source
 * partitions to read, which executor is which rank), and takes part in its executor's steps.
 *
 * <p>Spark marks a killed barrier task without interrupting it by default, so a watchdog polls
 * {@link BarrierTaskContext#isInterrupted()} and fails the executor's step: the waiting tasks and the
 * switch call end at once instead of at the timeout.
 */
public final class StageMember implements AutoCloseable {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        final Thread t = new Thread(r, "switchml-kill-watchdog");
        t.setDaemon(true);
        return t;
    });

    /** The longest pause between two polls of the driver while the stage's tasks gather. */
    private static final long MAX_POLL_NS = 2_000_000;

    /** Nanosecond marks of this task's start-up, for the stage's timing report. */
    static final int T_HELLO = 0;

    static final int T_PLAN = 1;

    private final BarrierTaskContext ctx;
    private final TaskSettings settings;
    private final ExecutorRuntime runtime;
    private final ExecutorStage stage;
    private final int task;
    private final int localIndex;
    private final ScheduledFuture<?> watch;
    private final Partition[] partitions;
    final long[] marks = new long[2];

    private StageMember(
            final BarrierTaskContext ctx,
            final TaskSettings settings,
            final ExecutorRuntime runtime,
            final ExecutorStage stage,
            final int task,
            final Partition[] partitions) {
        this.ctx = ctx;
        this.partitions = partitions;
        this.settings = settings;
        this.runtime = runtime;
        this.stage = stage;
        this.task = task;
        this.localIndex = stage.plan().localIndex()[task];
        final long poll = settings.killPollMs();
        this.watch = WATCHDOG.scheduleAtFixedRate(this::poll, poll, poll, TimeUnit.MILLISECONDS);
    }

    private void poll() {
        if (ctx.isInterrupted()) {
            stage.fail(new SwitchMLException(stage.describe() + ": task " + task + " was killed"));
        }
    }

    /**
     * Says hello and waits (polling the driver every 0.25 ms to 2 ms, bounded by
     * {@code spark.switchml.stageStartTimeout}) until every task of the stage has and the stage's job is
     * installed on the switch (on a sharded stage, this executor installs its own shard's part when the driver's
     * answer says so); then joins this executor's part of the stage.
     *
     * @throws SwitchUnreachableException when the driver knows the switch is down
     */
    static StageMember join(final BarrierTaskContext ctx, final TaskSettings s) {
        final long t0 = System.nanoTime();
        final ExecutorRuntime rt = ExecutorRuntime.get();
        final int task = ctx.partitionId();
        final String executorId = rt.executorId();
        // An executor without a worker socket says so; the driver then tells every task the switch is out of reach.
        final Rendezvous.Hello hello = new Rendezvous.Hello(
                s.stageKey(),
                task,
                executorId,
                rt.broken() != null ? null : Endpoints.endpoint(rt.worker().localAddress()),
                rt.mtu(),
                rt.broken() != null ? null : rt.shardAddress());
        final long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(s.startTimeoutMs());
        long pauseNs = 250_000;
        Rendezvous.Plan plan = null;
        Partition[] parts = null;
        while (plan == null) {
            final Object reply = rt.ask(hello);
            if (!(reply instanceof Rendezvous.PlanReply r)) {
                throw new SwitchMLException(
                        "stage " + s.stageKey() + " task " + task + ": unexpected answer from the driver: " + reply);
            }
            if (r.error() != null) {
                if (r.switchDown()) {
                    throw new SwitchUnreachableException(r.error());
                }
                throw new SwitchMLException(
                        "spark-switchml stage " + s.stageKey() + " task " + task + ": " + r.error());
            }
            if (r.plan() != null && r.install()) {
                // A sharded plan: this executor's shard gets its part before anyone streams to it. Every task of
                // the executor may do it; the same part again changes nothing.
                final int rank = r.plan().rankOfTask()[task];
                rt.installShardPart(r.plan(), rank);
                rt.ask(new Rendezvous.ShardInstalled(s.stageKey(), rank));
            } else {
                plan = r.plan();
                if (plan != null) {
                    parts = r.partitions();
                    break;
                }
            }
            ctx.killTaskIfInterrupted();
            if (System.nanoTime() - deadline > 0) {
                throw new SwitchMLException("spark-switchml stage " + s.stageKey() + " task " + task + " on executor "
                        + executorId + ": not every task of the stage said hello to the driver within "
                        + s.startTimeoutMs() + " ms (" + SwitchMLConfig.START_TIMEOUT.key() + ")");
            }
            LockSupport.parkNanos(pauseNs);
            pauseNs = Math.min(MAX_POLL_NS, pauseNs * 2);
        }
        final long tPlan = System.nanoTime();
        final ExecutorStage stage = rt.joinStage(s.stageKey(), plan, plan.rankOfTask()[task], s);
        final StageMember m = new StageMember(ctx, s, rt, stage, task, parts);
        m.marks[T_HELLO] = t0;
        m.marks[T_PLAN] = tPlan;
        return m;
    }

    /** The source partitions this task reads, in ascending order. */
    public Partition[] partitions() {
        return partitions;
    }

    /** Whether this task reports the stage's result to the driver. */
    public boolean reports() {
        return task == 0;
    }

    public Rendezvous.Plan plan() {
        return stage.plan();
    }

    /** Whether the stage sums exactly: one vector per source partition, quantized on its own. */
    public boolean exactSums() {
        return settings.exactSums();
    }

    /**
     * This task's contribution to one step; every task of the executor gets {@code fn}'s result. With exact sums
     * ({@link TaskSettings#exactSums()}) a task that read more than one source partition hands one vector each
     * ({@link #step(double[][], ExecutorStage.StepFunction)}).
     */
    public <R> R step(final double[] partial, final ExecutorStage.StepFunction<R> fn) {
        return step(new double[][] {partial}, fn);
    }

    /**
     * This task's contribution to one step as one vector per source partition it read, in the order of
     * {@link #partitions()} (with exact sums; without, exactly one vector, the task's sum); every task of the
     * executor gets {@code fn}'s result.
     */
    public <R> R step(final double[][] partials, final ExecutorStage.StepFunction<R> fn) {
        if (settings.exactSums() && partials.length != partitions.length) {
            throw new IllegalArgumentException("task " + task + " read " + partitions.length + " source partitions "
                    + "but handed " + partials.length + " vectors to an exact sum");
        }
        try {
            return stage.step(localIndex, partials, settings, fn);
        } catch (final SwitchUnreachableException e) {
            ctx.killTaskIfInterrupted(); // a kill explains the failure better than its symptom
            throw e;
        } catch (final SwitchMLException e) {
            ctx.killTaskIfInterrupted();
            throw e;
        }
    }

    /**
     * The profile of this task for the stage's report (ns): rendezvous (hellos, plan, job installed),
     * reading and computing, the steps, and the last step's allreduce.
     */
    public long[] timings(final long computeNs, final long stepNs) {
        // Durations, then monotonic clock marks (the same clock for every JVM of one host): hello, plan,
        // the last allreduce's start and end, and now.
        return new long[] {
            marks[T_PLAN] - marks[T_HELLO],
            computeNs,
            stepNs,
            stage.switchNs,
            marks[T_HELLO],
            marks[T_PLAN],
            stage.switchStart,
            stage.switchEnd,
            System.nanoTime(),
            stage.rank()
        };
    }

    /** Sends {@code message} to the driver, one way. */
    public void tell(final Object message) {
        runtime.tell(message);
    }

    /** Fails the executor's steps (a task of it failed). */
    void fail(final RuntimeException e) {
        stage.fail(e);
    }

    @Override
    public void close() {
        watch.cancel(false);
        runtime.leaveStage(stage);
    }
}

package org.switchml.spark.executor;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.switchml.client.ShardedSession;
import org.switchml.client.SwitchMLTimeoutException;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.ShardedJob;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;
import org.switchml.spark.messages.Endpoints;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;
import org.switchml.spark.shard.ExecutorShard;

/**
 * One barrier stage attempt as one executor sees it: the tasks of this executor sum their vectors in
 * memory, and the last of them to arrive streams the executor's vector through the switch (the
 * executor is one worker of the switch job) and runs the executor-level step on the sum; every task of
 * the executor then gets that step's outcome.
 *
 * <p>With exact sums ({@code spark.switchml.exactSums}, the default) each task hands one vector per source
 * partition it read, and the executor streams them as one worker's share of a sum over every partition
 * ({@link VectorCodec#forTerms}): each partition's vector quantized on its own with the block exponents agreed over
 * all of them, the executor's integers summed exactly. So the bits depend only on the partitions' vectors, never on
 * which executor ran which partition or in which order. Without, each task hands one vector and the in-memory sum
 * is taken in floating point in the tasks' local order, so a given placement of partitions always gives the same
 * bits, another placement possibly others; the switch's integer sum then gives every executor the same bits.
 *
 * <p>When the plan says the stage's only executor sums in memory, that executor applies the switch's
 * arithmetic itself (quantize, sum over one worker, dequantize): the bits the switch would return, with
 * no packet.
 */
public final class ExecutorStage {
    /** What the executor does with the global sum, once per step; its result is shared by the local tasks. */
    @FunctionalInterface
    public interface StepFunction<R> {
        R apply(double[] sum);
    }

    private final ExecutorRuntime runtime;
    private final String key;
    private final Rendezvous.Plan plan;
    private final int rank;
    private final int localCount;

    private int entered;
    /** Per local task: its vectors of the step in progress (one per source partition with exact sums). */
    private final double[][][] partials;
    /** Source partitions of the stage: the terms of an exact sum. */
    private final int terms;

    private int arrived;
    private long cycle;
    private Object result;
    private RuntimeException failure;
    private ShardedSession session;
    private boolean first = true;
    /** Time of the last step's allreduce (ns), for the profile. */
    volatile long switchNs;
    /** Monotonic clock marks of the last allreduce (start, end), for the stage's timeline in the profile. */
    volatile long switchStart;

    volatile long switchEnd;

    private final TaskSettings settings;

    ExecutorStage(
            final ExecutorRuntime runtime,
            final String key,
            final Rendezvous.Plan plan,
            final int rank,
            final TaskSettings settings) {
        this.runtime = runtime;
        this.key = key;
        this.plan = plan;
        this.rank = rank;
        this.settings = settings;
        this.localCount = plan.localCount()[rank];
        this.partials = new double[localCount][][];
        int p = 0;
        for (final int[] mine : plan.partitions()) {
            p += mine.length;
        }
        this.terms = Math.max(1, p);
    }

    String key() {
        return key;
    }

    int rank() {
        return rank;
    }

    Rendezvous.Plan plan() {
        return plan;
    }

    synchronized void enter() {
        entered++;
    }

    /** Returns whether this was the last task inside. */
    synchronized boolean leave() {
        return --entered == 0;
    }

    /** Fails every waiting and future step of this executor, and the switch call in progress. */
    void fail(final RuntimeException e) {
        final ShardedSession s;
        synchronized (this) {
            if (failure == null) {
                failure = e;
            }
            s = session;
            notifyAll();
        }
        if (s != null) {
            s.cancel(e);
        }
    }

    /**
     * Contributes this task's vectors (one, or with exact sums one per source partition it read) to the executor's
     * sum; the last local task to arrive allreduces it through the switch and applies {@code fn}. Returns
     * {@code fn}'s result to every local task.
     *
     * @throws SwitchUnreachableException when the switch did not answer within the bound or refused the job
     */
    @SuppressWarnings("unchecked")
    <R> R step(final int localIndex, final double[][] partial, final TaskSettings s, final StepFunction<R> fn) {
        if (partial.length < 1 || (!s.exactSums() && partial.length != 1)) {
            throw new IllegalArgumentException("task " + localIndex + " of executor " + runtime.executorId()
                    + " handed " + partial.length + " vectors to one step of stage " + key);
        }
        final double[][][] mine;
        final long myCycle;
        synchronized (this) {
            throwIfFailed();
            if (partials[localIndex] != null) {
                throw new IllegalStateException("task " + localIndex + " of executor " + runtime.executorId()
                        + " contributed twice to one step of stage " + key);
            }
            partials[localIndex] = partial;
            myCycle = cycle;
            if (++arrived < localCount) {
                final long deadline = System.nanoTime()
                        + TimeUnit.MILLISECONDS.toNanos(s.startTimeoutMs() + s.resultTimeoutMs() + 5_000);
                while (cycle == myCycle && failure == null) {
                    final long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        fail(new SwitchMLException(
                                describe() + ": the executor's other tasks did not finish the step within "
                                        + (s.startTimeoutMs() + s.resultTimeoutMs() + 5_000) + " ms"));
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, left);
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                        fail(new SwitchMLException(describe() + ": interrupted"));
                    }
                }
                if (cycle != myCycle) {
                    return (R) result;
                }
                throwIfFailed();
            }
            mine = partials.clone();
            Arrays.fill(partials, null);
            arrived = 0;
        }
        final R r;
        try {
            r = fn.apply(s.exactSums() ? allReduceTerms(flatten(mine), s) : allReduce(sum(mine), s));
        } catch (final RuntimeException e) {
            fail(e);
            throw e;
        }
        synchronized (this) {
            result = r;
            cycle++;
            notifyAll();
        }
        return r;
    }

    /**
     * The local vectors summed in local task order (the same bits for the same placement), into the first
     * of them: a step owns the vectors its tasks hand it, and with 10^7 elements a copy is 80 MB per step.
     */
    private static double[] sum(final double[][][] parts) {
        final double[] out = parts[0][0];
        for (int t = 1; t < parts.length; t++) {
            final double[] p = parts[t][0];
            if (p.length != out.length) {
                throw new IllegalArgumentException(
                        "tasks of one executor contributed vectors of lengths " + out.length + " and " + p.length);
            }
            for (int i = 0; i < out.length; i++) {
                out[i] += p[i];
            }
        }
        return out;
    }

    /** Every vector the tasks handed over, in local task order. */
    private static double[][] flatten(final double[][][] parts) {
        int n = 0;
        for (final double[][] p : parts) {
            n += p.length;
        }
        final double[][] out = new double[n][];
        int i = 0;
        for (final double[][] p : parts) {
            for (final double[] v : p) {
                if (v.length != parts[0][0].length) {
                    throw new IllegalArgumentException("tasks of one executor contributed vectors of lengths "
                            + parts[0][0].length + " and " + v.length);
                }
                out[i++] = v;
            }
        }
        return out;
    }

    /**
     * The exact sum of the stage's terms (one vector per source partition) through the switch, this executor's terms
     * being {@code terms}; the result goes into the first of them (in place, as {@link #allReduce}).
     */
    private double[] allReduceTerms(final double[][] mine, final TaskSettings s) {
        final double[] out = mine[0];
        final VectorCodec codec = VectorCodec.forTerms(mine, out, plan.k(), terms, s.fp64());
        if (plan.inMemory()) {
            final long t0 = System.nanoTime();
            codec.sumAlone();
            switchEnd = System.nanoTime();
            switchStart = t0;
            switchNs = switchEnd - t0;
            runtime.countAllReduce(bytes(out, s), switchNs);
            return out;
        }
        return stream(out, s, (js, waitOn) -> js.allReduce(codec, s.resultTimeoutMs(), waitOn));
    }

    /** One streaming call of this executor's session, with the stage's first-call wait and the profile. */
    @FunctionalInterface
    private interface Call {
        void run(ShardedSession session, BooleanSupplier waitOn);
    }

    /**
     * Allreduces through the switch, bounded by the result timeout. In the stage's first call, silence
     * may also mean that another executor is still reading its data: when the timeout passes, the driver
     * is asked whether every executor has been streaming for a result timeout; if not, the call waits on, up to
     * {@code spark.switchml.stageStartTimeout} in all.
     */
    private double[] allReduce(final double[] v, final TaskSettings s) {
        final long t0 = System.nanoTime();
        if (plan.inMemory()) {
            VectorCodec.forDoubles(v, v, plan.k(), 1, s.fp64()).sumAlone();
            switchEnd = System.nanoTime();
            switchStart = t0;
            switchNs = switchEnd - t0;
            runtime.countAllReduce(bytes(v, s), switchNs);
            return v;
        }
        // In place: v is the executor's own sum (of vectors its tasks handed over), and with 10^7 elements a result
        // array would be 80 MB of new garbage per step.
        return stream(v, s, (js, waitOn) -> js.allReduce(v, v, s.fp64(), s.resultTimeoutMs(), waitOn));
    }

    private double[] stream(final double[] v, final TaskSettings s, final Call call) {
        final long t0 = System.nanoTime();
        final ShardedSession js = session(s);
        BooleanSupplier waitOn = null;
        if (first) {
            first = false;
            runtime.tell(new Rendezvous.Streaming(key, rank));
            final long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(s.startTimeoutMs());
            waitOn = () -> System.nanoTime() - deadline < 0
                    && !Boolean.TRUE.equals(runtime.ask(new Rendezvous.AllStreaming(key)));
        }
        try {
            call.run(js, waitOn);
            runtime.countAllReduce(bytes(v, s), System.nanoTime() - t0);
            return v;
        } catch (final SwitchMLTimeoutException e) {
            throw new SwitchUnreachableException(e.getMessage() + lostShards(), e);
        } finally {
            switchEnd = System.nanoTime();
            switchStart = t0;
            switchNs = switchEnd - t0;
        }
    }

    private static long bytes(final double[] v, final TaskSettings s) {
        return (long) v.length * (s.fp64() ? Double.BYTES : Float.BYTES);
    }

    /**
     * The executor's session in the stage's job, on one switch or on every shard of a sharded job (installed
     * before the plan was given out).
     */
    private ShardedSession session(final TaskSettings s) {
        synchronized (this) {
            throwIfFailed();
            if (session != null) {
                return session;
            }
        }
        final List<ShardedJob.Part> parts = new ArrayList<>();
        for (final Rendezvous.Shard sh : plan.shards()) {
            parts.add(new ShardedJob.Part(SwitchAddress.parse(sh.address()), partSpec(plan, sh), sh.weight()));
        }
        final ShardedSession js = runtime.worker().join(new ShardedJob(parts), rank, s.resultTimeoutMs());
        synchronized (this) {
            session = js;
            throwIfFailed();
        }
        return js;
    }

    /** The job as shard {@code sh} of {@code plan} has it installed. */
    static JobSpec partSpec(final Rendezvous.Plan plan, final Rendezvous.Shard sh) {
        final List<InetSocketAddress> workers = new ArrayList<>();
        for (final String e : plan.endpoints()) {
            workers.add(Endpoints.parseEndpoint(e));
        }
        return new JobSpec(sh.jobId(), sh.generation(), sh.secret(), plan.k(), sh.poolSize(), workers);
    }

    /**
     * The last task of this executor left the stage: the part of the shard it hosts reports its counters to the
     * driver, and is retired once no other worker can still need one of its results (a worker that lost one asks
     * again within its result timeout, or fails).
     */
    void ended() {
        final ExecutorShard shard = runtime.shard();
        if (shard == null || !plan.sharded() || plan.inMemory()) {
            return;
        }
        for (final Rendezvous.Shard sh : plan.shards()) {
            if (sh.hostRank() != rank) {
                continue;
            }
            final JobSpec part = partSpec(plan, sh);
            final JobCounters c = shard.counters(part);
            if (c != null) {
                runtime.tell(new Rendezvous.ShardCounters(
                        part.jobId(), part.generation(), rank, Rendezvous.countersValues(c)));
            }
            shard.retire(part, settings.resultTimeoutMs() + RETIRE_GRACE_MS);
        }
    }

    /** How long past the result timeout a shard keeps a part after its own executor left the stage. */
    private static final long RETIRE_GRACE_MS = 5_000;

    /** For a failure's message: the executors of this stage (and their shards) that Spark lost, when it says. */
    private String lostShards() {
        if (!plan.sharded()) {
            return "";
        }
        try {
            final Object lost = runtime.ask(new Rendezvous.LostShards(key));
            return lost instanceof String l && !l.isEmpty() ? "; Spark lost " + l : "";
        } catch (final RuntimeException e) {
            return "";
        }
    }

    private void throwIfFailed() {
        if (failure != null) {
            throw failure;
        }
    }

    String describe() {
        return "job " + Integer.toUnsignedString(plan.jobId()) + " generation " + plan.generation() + " rank " + rank
                + " (executor " + runtime.executorId() + ", worker "
                + runtime.worker().localAddress() + ", switch "
                + plan.switchAddress() + ")";
    }
}

package org.switchml.client;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;

/**
 * One worker's membership in one job: allreduces vectors with the job's other workers. Calls must be
 * made in the same order, with the same lengths and types, on every worker (the packet numbering of
 * docs/protocol.md section 3 continues across calls).
 *
 * <p>After a failed or interrupted call the session is broken (the workers' numbering may have
 * diverged): the job must be registered again under a new generation.
 */
public final class JobSession {
    private final SwitchMLClient client;
    private final JobSpec spec;
    private final int rank;
    private final SwitchAddress switchAddress;
    /** Job-global number of the next packet (g of docs/protocol.md). Written only between calls. */
    private long nextPacket;

    private volatile boolean broken;
    /** Round-trip estimate, kept across calls; touched only by the running call on the event loop. */
    private final RttEstimator rtt;

    private final long resultTimeoutMs;
    /** The call in progress, for {@link #cancel}. */
    private volatile AllReduceOperation current;

    JobSession(
            final SwitchMLClient client,
            final JobSpec spec,
            final int rank,
            final SwitchAddress switchAddress,
            final long resultTimeoutMs) {
        this.client = client;
        this.resultTimeoutMs = resultTimeoutMs;
        this.spec = spec;
        this.rank = rank;
        this.switchAddress = switchAddress;
        final ClientOptions o = client.options();
        this.rtt = new RttEstimator(
                TimeUnit.MILLISECONDS.toNanos(o.minRetransmitTimeoutMs()),
                TimeUnit.MILLISECONDS.toNanos(o.retransmitTimeoutMs()),
                TimeUnit.MILLISECONDS.toNanos(o.maxRetransmitTimeoutMs()));
    }

    RttEstimator rtt() {
        return rtt;
    }

    public JobSpec spec() {
        return spec;
    }

    public int rank() {
        return rank;
    }

    public SwitchAddress switchAddress() {
        return switchAddress;
    }

    /** Element-wise sum over all workers (FP32_BLOCK encoding). */
    public float[] allReduce(final float[] in) {
        final float[] out = new float[in.length];
        run(VectorCodec.forFloats(in, out, spec.k(), spec.numWorkers()));
        return out;
    }

    /** Element-wise sum over all workers (FP64_SPLIT when the client's options ask for fp64). */
    public double[] allReduce(final double[] in) {
        return allReduce(in, client.options().fp64());
    }

    /**
     * Element-wise sum over all workers: FP64_SPLIT (two int32 lanes per element) when {@code fp64},
     * FP32_BLOCK otherwise. Every worker must make the same choice for the same call.
     */
    public double[] allReduce(final double[] in, final boolean fp64) {
        return allReduce(in, fp64, resultTimeoutMs);
    }

    /**
     * As {@link #allReduce(double[], boolean)}, failing when no result arrives for {@code timeoutMs}
     * instead of the session's result timeout (e.g. a first call that also waits for slower workers).
     */
    public double[] allReduce(final double[] in, final boolean fp64, final long timeoutMs) {
        return allReduce(in, fp64, timeoutMs, null);
    }

    /**
     * As {@link #allReduce(double[], boolean, long)}; when no result arrived for {@code timeoutMs},
     * {@code waitOn} (called on this thread, it may ask a coordinator) says whether the silence is expected,
     * e.g. because another worker has not started this call yet: then the call waits another period,
     * else it fails with the timeout error. A null {@code waitOn} never waits on.
     */
    public double[] allReduce(
            final double[] in, final boolean fp64, final long timeoutMs, final BooleanSupplier waitOn) {
        final double[] out = new double[in.length];
        allReduce(in, out, fp64, timeoutMs, waitOn);
        return out;
    }

    /**
     * As {@link #allReduce(double[], boolean, long, BooleanSupplier)}, writing the sum into
     * {@code out}, which may be {@code in} itself: a block is encoded (and re-encoded for a retransmission)
     * only until its result arrives, and its result is decoded after that, so the sum can replace the input
     * block by block. A call that fails leaves {@code out} partly written (and {@code in}, when the same).
     */
    public void allReduce(
            final double[] in,
            final double[] out,
            final boolean fp64,
            final long timeoutMs,
            final BooleanSupplier waitOn) {
        if (timeoutMs < 1) {
            throw new IllegalArgumentException(describe() + ": timeout must be >= 1 ms, got " + timeoutMs);
        }
        run(VectorCodec.forDoubles(in, out, spec.k(), spec.numWorkers(), fp64), timeoutMs, waitOn);
    }

    /** Bound on the wait for a result in this session's calls. */
    public long resultTimeoutMs() {
        return resultTimeoutMs;
    }

    /**
     * Fails the call in progress (if any) with {@code reason}, from any thread; the session is then
     * broken. Used when the caller is killed while it waits.
     */
    public void cancel(final RuntimeException reason) {
        broken = true;
        final AllReduceOperation op = current;
        if (op != null) {
            op.cancel(reason);
        }
    }

    /** Element-wise sum over all workers, modulo 2^32. */
    public int[] allReduce(final int[] in) {
        final int[] out = new int[in.length];
        run(VectorCodec.forInts(in, out, spec.k(), spec.numWorkers()));
        return out;
    }

    private void run(final VectorCodec codec) {
        run(codec, resultTimeoutMs, null);
    }

    private synchronized void run(final VectorCodec codec, final long timeoutMs, final BooleanSupplier waitOn) {
        final AllReduceOperation op = begin(codec, timeoutMs, waitOn != null);
        try {
            Calls.await(List.of(op), timeoutMs, waitOn, describe());
            finished(op);
        } catch (final RuntimeException e) {
            failed();
            throw e;
        }
    }

    /**
     * Starts a call on the worker's event loop; the caller waits for it ({@link Calls#await}) and then calls
     * {@link #finished} or {@link #failed}. One call at a time: the caller serialises them.
     *
     * @param askBeforeTimeout whether a call without progress for the timeout only marks itself stalled, for
     *                         the caller to decide
     */
    AllReduceOperation begin(final VectorCodec codec, final long timeoutMs, final boolean askBeforeTimeout) {
        if (broken) {
            throw new SwitchMLException(describe() + ": session is broken by an earlier failure; "
                    + "register the job again under a new generation");
        }
        final AllReduceOperation op = new AllReduceOperation(client, this, codec, nextPacket, timeoutMs);
        if (askBeforeTimeout) {
            op.askBeforeTimeout();
        }
        current = op;
        client.loop().execute(op::start);
        return op;
    }

    /** The call {@code op} of {@link #begin} completed: the packet numbering moves past it. */
    void finished(final AllReduceOperation op) {
        nextPacket += op.totalPackets();
        current = null;
    }

    /** The call of {@link #begin} failed or was abandoned: the session is broken. */
    void failed() {
        broken = true;
        final AllReduceOperation op = current;
        current = null;
        if (op != null) {
            op.cancel(new SwitchMLException(describe() + ": allreduce abandoned"));
        }
    }

    /** Whether an earlier failure broke this session. */
    public boolean broken() {
        return broken;
    }

    /** The session's job, generation, rank and worker socket, for messages. */
    String describe() {
        final InetSocketAddress worker = client.localAddress();
        return "job " + spec.jobName() + " generation " + spec.generation() + " rank " + rank + " (worker "
                + worker.getHostString() + ":" + worker.getPort() + ")";
    }
}

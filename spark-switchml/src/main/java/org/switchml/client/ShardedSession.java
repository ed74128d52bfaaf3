package org.switchml.client;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.switchml.protocol.ShardedJob;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;

/**
 * One worker's membership in a {@link ShardedJob}: each call streams every shard's run of blocks to that shard,
 * all at once, and takes each run's result from its shard alone. The sum is bit for bit what one switch returns
 * for the same inputs (see {@link ShardedJob}). Calls must be made in the same order, with the same lengths and
 * types, on every worker.
 *
 * <p>Each shard's part is a {@link JobSession} of its own, with its own packet numbering, window and round-trip
 * estimate, so a slow shard holds up only its own run. A call ends when every part has its result, or fails with
 * the first part that fails (its error names the shard's {@code host:port}); the other parts are cancelled, and
 * the session is then broken, as a {@link JobSession} is.
 */
public final class ShardedSession {
    private final SwitchMLClient client;
    private final ShardedJob job;
    private final int rank;
    private final JobSession[] parts;
    private final long resultTimeoutMs;
    private volatile boolean broken;

    ShardedSession(
            final SwitchMLClient client,
            final ShardedJob job,
            final int rank,
            final List<JobSession> parts,
            final long resultTimeoutMs) {
        this.client = client;
        this.job = job;
        this.rank = rank;
        this.parts = parts.toArray(new JobSession[0]);
        this.resultTimeoutMs = resultTimeoutMs;
    }

    public ShardedJob job() {
        return job;
    }

    public int rank() {
        return rank;
    }

    /** Bound on the wait for a result in this session's calls. */
    public long resultTimeoutMs() {
        return resultTimeoutMs;
    }

    /** Element-wise sum over all workers (FP32_BLOCK encoding). */
    public float[] allReduce(final float[] in) {
        final float[] out = new float[in.length];
        run(VectorCodec.forFloats(in, out, job.k(), job.numWorkers()), resultTimeoutMs, null);
        return out;
    }

    /** Element-wise sum over all workers: FP64_SPLIT when {@code fp64}, FP32_BLOCK otherwise. */
    public double[] allReduce(final double[] in, final boolean fp64) {
        final double[] out = new double[in.length];
        allReduce(in, out, fp64, resultTimeoutMs, null);
        return out;
    }

    /** Element-wise sum over all workers, modulo 2^32. */
    public int[] allReduce(final int[] in) {
        final int[] out = new int[in.length];
        run(VectorCodec.forInts(in, out, job.k(), job.numWorkers()), resultTimeoutMs, null);
        return out;
    }

    /**
     * As {@link JobSession#allReduce(double[], double[], boolean, long, java.util.function.BooleanSupplier)}:
     * writes the sum into {@code out}, which may be {@code in}; when a part had no result for {@code timeoutMs},
     * {@code waitOn} says whether to wait another period (null: never).
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
        run(VectorCodec.forDoubles(in, out, job.k(), job.numWorkers(), fp64), timeoutMs, waitOn);
    }

    /**
     * As {@link #allReduce(double[], double[], boolean, long, BooleanSupplier)}, for a codec of the caller's, e.g. one
     * worker's share of a sum of several terms ({@link VectorCodec#forTerms}); its k must be the job's.
     */
    public void allReduce(final VectorCodec codec, final long timeoutMs, final BooleanSupplier waitOn) {
        if (timeoutMs < 1) {
            throw new IllegalArgumentException(describe() + ": timeout must be >= 1 ms, got " + timeoutMs);
        }
        if (codec.k() != job.k()) {
            throw new IllegalArgumentException(
                    describe() + ": the codec has k = " + codec.k() + ", the job " + job.k());
        }
        run(codec, timeoutMs, waitOn);
    }

    /** Fails the call in progress (if any) with {@code reason}, from any thread; the session is then broken. */
    public void cancel(final RuntimeException reason) {
        broken = true;
        for (final JobSession p : parts) {
            p.cancel(reason);
        }
    }

    /** Whether an earlier failure broke this session. */
    public boolean broken() {
        return broken;
    }

    private synchronized void run(final VectorCodec codec, final long timeoutMs, final BooleanSupplier waitOn) {
        if (broken) {
            throw new SwitchMLException(describe() + ": session is broken by an earlier failure; "
                    + "register the job again under a new generation");
        }
        final int[] starts = job.blockStarts(codec.blocks());
        final List<AllReduceOperation> ops = new ArrayList<>(parts.length);
        final List<JobSession> running = new ArrayList<>(parts.length);
        try {
            for (int i = 0; i < parts.length; i++) {
                final int count = starts[i + 1] - starts[i];
                if (count == 0) {
                    continue; // every worker splits the same call the same way: no shard waits for this part
                }
                running.add(parts[i]);
                ops.add(parts[i].begin(
                        parts.length == 1 ? codec : codec.part(starts[i], count), timeoutMs, waitOn != null));
            }
            Calls.await(ops, timeoutMs, waitOn, describe());
        } catch (final RuntimeException e) {
            broken = true;
            for (final JobSession p : parts) {
                p.failed();
            }
            throw e;
        }
        for (int i = 0; i < ops.size(); i++) {
            running.get(i).finished(ops.get(i));
        }
    }

    /** The job, rank and worker socket, for messages. */
    String describe() {
        final InetSocketAddress worker = client.localAddress();
        return "job " + job.jobName() + " generation "
                + job.parts().get(0).spec().generation() + " rank " + rank
                + " (worker " + worker.getHostString() + ":" + worker.getPort() + ", " + job.size() + " shard"
                + (job.size() == 1 ? "" : "s") + ")";
    }
}

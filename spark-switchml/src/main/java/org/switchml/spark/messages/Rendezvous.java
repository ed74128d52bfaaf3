package org.switchml.spark.messages;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;
import org.apache.spark.Partition;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;

/**
 * The messages of a barrier stage's rendezvous, sent by each task to the driver (the plugin's driver
 * endpoint, or a direct call in a local JVM without the plugin). A reply is always immediate: the
 * driver endpoint must never block, so a task polls until the answer is final.
 */
public final class Rendezvous {
    private Rendezvous() {}

    /**
     * The bytes of a message as it crosses Spark's RPC. Spark deserializes RPC messages with the
     * classloader of its RPC threads, which does not see jars added with {@code --jars}; so messages
     * travel as {@code byte[]} and are read back here, with the loader that loaded spark-switchml.
     */
    public static byte[] encode(final Serializable message) {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(message);
        } catch (final IOException e) {
            throw new IllegalStateException(
                    "cannot serialize " + message.getClass().getSimpleName() + ": " + e, e);
        }
        return bytes.toByteArray();
    }

    /** Reads what {@link #encode} wrote (also classes of the application's jars: they share our loader). */
    public static Object decode(final byte[] bytes) {
        final ClassLoader loader = Rendezvous.class.getClassLoader();
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes)) {
            @Override
            protected Class<?> resolveClass(final ObjectStreamClass desc) throws IOException, ClassNotFoundException {
                try {
                    return Class.forName(desc.getName(), false, loader);
                } catch (final ClassNotFoundException e) {
                    return super.resolveClass(desc);
                }
            }
        }) {
            return in.readObject();
        } catch (final IOException | ClassNotFoundException e) {
            throw new IllegalStateException("cannot read a spark-switchml message: " + e, e);
        }
    }

    /**
     * A task of stage {@code stage} says where it runs: the executor and that executor's worker socket.
     *
     * @param stage      {@link TaskSettings#stageKey()}
     * @param task       the task's index in the stage (its barrier partition id)
     * @param executorId Spark's executor id
     * @param endpoint   {@code ip:port} of the executor's worker socket
     * @param mtu        MTU of the interface that socket is bound to (0 when unknown)
     * @param shard      dataplane address {@code host:port[,port...]} of the switch shard the executor hosts, or
     *                   null when it hosts none
     */
    public record Hello(String stage, int task, String executorId, String endpoint, int mtu, String shard)
            implements Serializable {
        private static final long serialVersionUID = 2L;

        /** A hello from an executor that hosts no switch shard. */
        public Hello(
                final String stage, final int task, final String executorId, final String endpoint, final int mtu) {
            this(stage, task, executorId, endpoint, mtu, null);
        }
    }

    /**
     * An executor's worker socket, announced once when the executor starts (and again if the driver did
     * not know it), so the driver can install a stage's job before the stage's tasks even start.
     *
     * @param executorId Spark's executor id
     * @param endpoint   {@code ip:port} of the executor's worker socket
     * @param mtu        MTU of the interface that socket is bound to (0 when unknown)
     * @param shard      dataplane address of the switch shard the executor hosts, or null
     */
    public record Worker(String executorId, String endpoint, int mtu, String shard) implements Serializable {
        private static final long serialVersionUID = 2L;
    }

    /**
     * The driver's answer to a {@link Hello}: not yet (some tasks have not said hello, or the job is not
     * installed on the switch yet), the plan, or a
     * refusal (the stage is unknown or over, or cannot run as one switch job; the task must fail), or
     * the switch is down (the task reports it, and the driver falls back).
     *
     * @param plan       the plan, or null
     * @param error      why the task cannot take part, or null
     * @param switchDown whether {@code error} says the switch cannot be reached
     * @param partitions the source partitions this task reads (only its own: a partition of a
     *                   parallelized collection carries its data, so no task gets all of them)
     * @param install    whether the plan is not final yet: each executor that hosts one of its shards installs its
     *                   part, says so ({@link ShardInstalled}), and asks again
     */
    public record PlanReply(Plan plan, String error, boolean switchDown, Partition[] partitions, boolean install)
            implements Serializable {
        private static final long serialVersionUID = 2L;
        public static final PlanReply PENDING = new PlanReply(null, null, false, null, false);

        public static PlanReply failed(final String error, final boolean switchDown) {
            return new PlanReply(null, error, switchDown, null, false);
        }
    }

    /**
     * One shard of a stage's job: a switch that owns a run of the vector's blocks in proportion to its weight,
     * with a registration of its own (docs/design.md, "Sharded aggregation"). A job on one switch has one shard.
     *
     * @param address    the shard's dataplane address, {@code host:port[,port...]}
     * @param jobId      the job's id on that switch
     * @param generation the attempt (a retried stage registers a new generation)
     * @param secret     the registration's secret (the shard checks it in every packet)
     * @param poolSize   slots of the job on that shard
     * @param weight     the shard's share of the blocks, relative to the other shards'
     * @param hostRank   the rank of the executor that hosts the shard, or -1 for a switch of the driver or of
     *                   the network (installed by the driver)
     */
    public record Shard(String address, int jobId, int generation, int secret, int poolSize, int weight, int hostRank)
            implements Serializable {
        private static final long serialVersionUID = 1L;

        /** The same shard with the secret of its installed registration. */
        public Shard withSecret(final int s) {
            return new Shard(address, jobId, generation, s, poolSize, weight, hostRank);
        }
    }

    /**
     * How one barrier stage runs, decided by the driver once every task has said hello, and given out
     * once its job is installed on every shard; the same for every task.
     *
     * @param shards       the job's shards, in the order of the runs of blocks they own (one for a switch)
     * @param k            int32 elements per packet
     * @param endpoints    {@code ip:port} of each rank's worker socket (one rank per executor)
     * @param rankOfTask   per task: the rank of its executor
     * @param localIndex   per task: its index among the tasks of its executor
     * @param localCount   per rank: how many tasks run on that executor
     * @param partitions   per task: the source partitions it reads, ascending
     * @param inMemory     whether the one executor computes the switch's sum itself (no job was installed)
     */
    public record Plan(
            Shard[] shards,
            int k,
            String[] endpoints,
            int[] rankOfTask,
            int[] localIndex,
            int[] localCount,
            int[][] partitions,
            boolean inMemory)
            implements Serializable {
        private static final long serialVersionUID = 2L;

        public int workers() {
            return endpoints.length;
        }

        /** The job id (of the first shard; every executor-hosted shard has the same). */
        public int jobId() {
            return shards[0].jobId();
        }

        /** The attempt. */
        public int generation() {
            return shards[0].generation();
        }

        /** Whether the job is split among several shards. */
        public boolean sharded() {
            return shards.length > 1;
        }

        /** The shards' dataplane addresses, for messages. */
        public String switchAddress() {
            final StringBuilder sb = new StringBuilder();
            for (final Shard s : shards) {
                sb.append(sb.length() == 0 ? "" : "; ").append(s.address());
            }
            return sb.toString();
        }

        /** The same plan with other shards. */
        public Plan withShards(final Shard[] s, final boolean inMemoryNow) {
            return new Plan(s, k, endpoints, rankOfTask, localIndex, localCount, partitions, inMemoryNow);
        }
    }

    /**
     * Asked by a task once its executor installed its part of a sharded stage on the shard it hosts: the plan is
     * final when every shard's part is installed.
     */
    public record ShardInstalled(String stage, int rank) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /**
     * Told (one way) by an executor when the stage of a sharded job ends there: the counters of its shard's part
     * ({@code packetsIn, packetsOut, retransmissions}, then the drops in {@code DropReason} order).
     */
    public record ShardCounters(int jobId, int generation, int rank, long[] counters) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** The values of a {@link ShardCounters} message for {@code c}, drops in {@link DropReason} order. */
    public static long[] countersValues(final JobCounters c) {
        final DropReason[] reasons = DropReason.values();
        final long[] v = new long[3 + reasons.length];
        v[0] = c.packetsIn();
        v[1] = c.packetsOut();
        v[2] = c.retransmissions();
        for (int i = 0; i < reasons.length; i++) {
            v[3 + i] = c.drops().get(reasons[i]);
        }
        return v;
    }

    /** The counters a {@link ShardCounters} message carries. */
    public static JobCounters countersOf(final long[] v) {
        return new JobCounters(
                v[0], v[1], v[2], DropCounts.of(r -> 3 + r.ordinal() < v.length ? v[3 + r.ordinal()] : 0));
    }

    /**
     * Asked by an executor whose stage failed: which executors of the stage, and so which shards, Spark lost (the
     * answer is a {@code String}: their ids and shards, or empty).
     */
    public record LostShards(String stage) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /**
     * Told (one way) by the task that streams an executor's vector, as the stage's first allreduce
     * starts: rank {@code rank} is streaming.
     */
    public record Streaming(String stage, int rank) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /**
     * Asked only when a stage's first allreduce had no result for the result timeout: has every rank been
     * streaming for a result timeout? If not, the silence is a slower executor still reading its data (or one
     * whose first packets are still on their way), and the call waits on (up to
     * {@code spark.switchml.stageStartTimeout}); if so, the switch is not answering.
     */
    public record AllStreaming(String stage) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** Told (one way) by task 0 of a replicated loop after each iteration, for its progress listener. */
    public record Progress(long listener, int iteration, double[] scalars, long nanos, int jobId)
            implements Serializable {
        private static final long serialVersionUID = 1L;
    }
}

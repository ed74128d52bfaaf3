package org.switchml.spark.rpc;

import org.apache.spark.Partition;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;

/**
 * The messages of a barrier stage's rendezvous, sent by each task to the driver (the plugin's driver
 * endpoint, or a direct call in a local JVM without the plugin). A reply is always immediate: the
 * driver endpoint must never block, so a task polls until the answer is final.
 */
public final class Rendezvous {
    private Rendezvous() {
    }

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
            throw new IllegalStateException("cannot serialize " + message.getClass().getSimpleName() + ": " + e, e);
        }
        return bytes.toByteArray();
    }

    /** Reads what {@link #encode} wrote (also classes of the application's jars: they share our loader). */
    public static Object decode(final byte[] bytes) {
        final ClassLoader loader = Rendezvous.class.getClassLoader();
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes)) {
            @Override
            protected Class<?> resolveClass(final ObjectStreamClass desc)
                    throws IOException, ClassNotFoundException {
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
     */
    public record Hello(String stage, int task, String executorId, String endpoint, int mtu) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /**
     * An executor's worker socket, announced once when the executor starts (and again if the driver did
     * not know it), so the driver can install a stage's job before the stage's tasks even start.
     *
     * @param executorId Spark's executor id
     * @param endpoint   {@code ip:port} of the executor's worker socket
     * @param mtu        MTU of the interface that socket is bound to (0 when unknown)
     */
    public record Worker(String executorId, String endpoint, int mtu) implements Serializable {
        private static final long serialVersionUID = 1L;
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
     */
    public record PlanReply(Plan plan, String error, boolean switchDown, Partition[] partitions)
            implements Serializable {
        private static final long serialVersionUID = 1L;
        public static final PlanReply PENDING = new PlanReply(null, null, false, null);

        public static PlanReply failed(final String error, final boolean switchDown) {
            return new PlanReply(null, error, switchDown, null);
        }
    }

    /**
     * How one barrier stage runs, decided by the driver once every task has said hello, and given out
     * once its job is installed on the switch; the same for every task.
     *
     * @param switchAddress the switch's dataplane address, {@code host:port[,port...]}
     * @param jobId        the switch job
     * @param generation   the attempt (a retried stage registers a new generation)
     * @param secret       the job's secret as installed (the switch checks it in every packet)
     * @param k            int32 elements per packet
     * @param poolSize     slots of the job
     * @param endpoints    {@code ip:port} of each rank's worker socket (one rank per executor)
     * @param rankOfTask   per task: the rank of its executor
     * @param localIndex   per task: its index among the tasks of its executor
     * @param localCount   per rank: how many tasks run on that executor
     * @param partitions   per task: the source partitions it reads, ascending
     * @param inMemory     whether the one executor computes the switch's sum itself (no job was installed)
     */
    public record Plan(String switchAddress, int jobId, int generation, int secret, int k, int poolSize, String[] endpoints, int[] rankOfTask,
                int[] localIndex, int[] localCount, int[][] partitions, boolean inMemory) implements Serializable {
        private static final long serialVersionUID = 1L;

        public int workers() {
            return endpoints.length;
        }
    }

    /**
     * Told (one way) by the task that streams an executor's vector, as the stage's first allreduce
     * starts: rank {@code rank} is streaming.
     */
    public record Streaming(String stage, int rank) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /**
     * Asked only when a stage's first allreduce had no result for the result timeout: is every rank
     * streaming? If not, the silence is a slower executor still reading its data, and the call waits on
     * (up to {@code spark.switchml.stageStartTimeout}); if so, the switch is not answering.
     */
    public record AllStreaming(String stage) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** Told (one way) by task 0 of a replicated loop after each iteration, for its progress listener. */
    public record Progress(long listener, int iteration, double[] scalars, long nanos, int jobId) implements Serializable {
        private static final long serialVersionUID = 1L;
    }
}

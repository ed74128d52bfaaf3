package org.switchml.spark;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.Partition;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StageLauncher;
import org.switchml.spark.executor.Inputs;
import org.switchml.spark.executor.TaskFrame;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;
import scala.Function1;
import scala.collection.Iterator;

/**
 * The treeAggregate replacement: the element-wise sum over partitions of each partition's
 * {@code double[]}, computed in one barrier stage where every task streams its vector through the
 * switch (executor → switch → every executor); nothing but the final O(dim) result reaches the driver.
 *
 * <p>Usable from Java ({@link JavaRDD}) and Scala ({@link RDD}; Scala lambdas convert to {@link SeqOp}).
 * The result equals {@code treeAggregate(zero, seqOp, elementwiseAdd)} within the quantization bound
 * of {@code spark.switchml.precision}: fp64 (default) at most n·2^(E−2B−2) per element, i.e. far below
 * 1e-12 of the block maximum; fp32 at most n·2^(E−B−1) (docs/protocol.md section 5).
 *
 * <p>Any number of partitions works: the barrier stage has one task per task slot (at most one per
 * partition), each task folds the partitions the stage's plan gives it (those cached on its executor
 * first), the tasks of one executor sum in memory, and each executor is one worker of the switch job
 * (at most 256 executors on the software switch, 32 on the P4 program; beyond that the fallback applies).
 * A failed stage runs again under a new job generation
 * ({@code spark.switchml.stageAttempts}).
 * When the switch is unreachable, {@code spark.switchml.fallback} decides: treeAggregate (one warning,
 * counted in {@link SwitchMLDriver#fallbackCount()}) or an error. So it does when Spark refuses barrier stages,
 * i.e. with {@code spark.dynamicAllocation.enabled=true} on a cluster ({@link SwitchMLDriver#barrierStagesRefused};
 * one warning per application, every such call counted).
 *
 * <p>When every task of the stage runs in one executor (a {@code local[N]} master, or one executor), that
 * executor applies the switch's arithmetic itself, with no packet and no switch job: the same bits as
 * through the switch ({@code spark.switchml.localShortcut}; {@link Result#inMemory()} says so).
 */
public final class SwitchMLAggregator {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLAggregator.class);
    /** Applications already warned that Spark refuses barrier stages (dynamic allocation). */
    private static final Set<String> WARNED_REFUSED = ConcurrentHashMap.newKeySet();

    /**
     * Local property a barrier task can read ({@code TaskContext.get().getLocalProperty}) to learn which
     * attempt of its switch call it belongs to: "0" first, then one more per retry.
     */
    public static final String ATTEMPT_PROPERTY = StageLauncher.ATTEMPT_PROPERTY;

    private SwitchMLAggregator() {}

    /**
     * Folds one record into a partition's accumulator (MLlib aggregator shape); may update {@code acc}
     * in place and return it.
     *
     * @param <T> record type
     */
    @FunctionalInterface
    public interface SeqOp<T> extends Serializable {
        double[] apply(double[] acc, T record);
    }

    /**
     * The outcome of one call.
     *
     * @param sum            the element-wise sum
     * @param viaSwitch      false when the fallback computed it; true also when {@code inMemory}, which
     *                       computes what the switch would
     * @param jobId          the switch job id used (also when it fell back mid-stage); 0 when no job was needed;
     *                       when {@code inMemory}, the call's id, under which no job was installed
     * @param fallbackReason why it fell back, or null
     * @param workers        the switch job's workers: the executors that took part (0 after a fallback)
     * @param inMemory       whether every task ran in one executor, which computed the switch's sum itself,
     *                       bit for bit, sending no packet ({@code spark.switchml.localShortcut})
     * @param shards         the switches the sum was split among: 1 for one switch, more when the executors
     *                       (and extra hosts) ran shards of it ({@code spark.switchml.switch.placement}); 0 when
     *                       no switch took part
     */
    public record Result(
            double[] sum,
            boolean viaSwitch,
            int jobId,
            String fallbackReason,
            int workers,
            boolean inMemory,
            int shards) {
        /** A result on one switch, or none. */
        public Result(
                final double[] sum,
                final boolean viaSwitch,
                final int jobId,
                final String fallbackReason,
                final int workers,
                final boolean inMemory) {
            this(
                    sum,
                    viaSwitch,
                    jobId,
                    fallbackReason,
                    workers,
                    inMemory,
                    viaSwitch && !inMemory && workers > 0 ? 1 : 0);
        }
    }

    /** Element-wise sum over partitions of {@code fold(zero, partition, seqOp)}. */
    public static <T> double[] aggregate(
            final JavaRDD<T> rdd, final int length, final double[] zero, final SeqOp<T> seqOp) {
        return aggregateWithInfo(rdd.rdd(), length, zero, seqOp).sum();
    }

    /** Element-wise sum over partitions of {@code fold(zero, partition, seqOp)}. */
    public static <T> double[] aggregate(
            final RDD<T> rdd, final int length, final double[] zero, final SeqOp<T> seqOp) {
        return aggregateWithInfo(rdd, length, zero, seqOp).sum();
    }

    /**
     * As {@link #aggregate(RDD, int, double[], SeqOp)}, also telling how the sum was computed.
     *
     * @param zero the starting accumulator of every partition; the identity (all zeros) for a plain sum
     */
    public static <T> Result aggregateWithInfo(
            final RDD<T> rdd, final int length, final double[] zero, final SeqOp<T> seqOp) {
        if (zero.length != length) {
            throw new IllegalArgumentException("zero has length " + zero.length + ", expected " + length);
        }
        final SparkContext sc = rdd.sparkContext();
        final int partitions = rdd.getNumPartitions();
        if (partitions == 0) {
            return new Result(zero.clone(), true, 0, null, 0, false);
        }
        final SwitchMLConfig.Fallback fallback = SwitchMLConfig.FALLBACK.from(SwitchMLConfig.forCall(sc));
        final DriverRuntime rt = DriverRuntimes.forContext(sc);
        final String refused = StageLauncher.refusedFallback(sc.conf(), fallback, rt);
        if (refused != null) {
            if (WARNED_REFUSED.add(sc.applicationId())) {
                LOG.warn(
                        "spark-switchml: {}; computing with treeAggregate instead ({}=treeAggregate); set {}=false "
                                + "to aggregate through the switch. This warning is given once per application; "
                                + "SwitchMLDriver.fallbackCount() counts every such call.",
                        refused,
                        SwitchMLConfig.FALLBACK.key(),
                        StageLauncher.DYNAMIC_ALLOCATION);
            }
            return new Result(treeAggregate(rdd, zero, seqOp), false, 0, refused, 0, false);
        }
        final int jobId = rt.newJobId();
        final List<TaskOutcome> outcomes;
        try {
            outcomes = StageLauncher.run(rdd, rt, jobId, s -> new AggregateTask<>(s, rdd, length, zero, seqOp));
        } finally {
            rt.remove(jobId);
        }
        double[] sum = null;
        int workers = 0;
        int shards = 0;
        boolean inMemory = false;
        for (final TaskOutcome o : outcomes) {
            if (o.status == TaskOutcome.UNREACHABLE) {
                final String reason = StageLauncher.unreachable(o, fallback, rt);
                LOG.warn(
                        "spark-switchml: switch {} unreachable ({}); computing job {} with treeAggregate instead "
                                + "({}=treeAggregate)",
                        rt.switchName(),
                        reason,
                        Integer.toUnsignedString(jobId),
                        SwitchMLConfig.FALLBACK.key());
                return new Result(treeAggregate(rdd, zero, seqOp), false, jobId, reason, 0, false);
            }
            if (o.vector != null) {
                sum = o.vector;
                workers = o.workers;
                inMemory = o.inMemory;
                shards = o.shards;
            }
        }
        if (sum == null) {
            throw new IllegalStateException("spark-switchml: job " + jobId + " returned no result from task 0");
        }
        return new Result(sum, true, jobId, null, workers, inMemory, shards);
    }

    /** Spark's treeAggregate with element-wise addition: the fallback and the reference. */
    public static <T> double[] treeAggregate(final RDD<T> rdd, final double[] zero, final SeqOp<T> seqOp) {
        final JavaRDD<T> j = JavaRDD.fromRDD(rdd, rdd.elementClassTag());
        return j.treeAggregate(zero, seqOp::apply, SwitchMLAggregator::addInto);
    }

    static double[] addInto(final double[] a, final double[] b) {
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
        return a;
    }

    /**
     * The barrier task: fold the source partitions the plan gives this task, sum in memory with the
     * executor's other tasks, allreduce the executor's vector through the switch; task 0 returns the sum.
     */
    private static final class AggregateTask<T>
            implements Function1<Iterator<Integer>, Iterator<TaskOutcome>>, Serializable {
        private static final long serialVersionUID = 1L;
        private final TaskSettings settings;
        private final RDD<T> source;
        private final int length;
        private final double[] zero;
        private final SeqOp<T> seqOp;

        AggregateTask(
                final TaskSettings settings,
                final RDD<T> source,
                final int length,
                final double[] zero,
                final SeqOp<T> seqOp) {
            this.settings = settings;
            this.source = source;
            this.length = length;
            // An all-zero start need not travel in every task's closure (it would be O(dim) per task).
            this.zero = allZero(zero) ? null : zero;
            this.seqOp = seqOp;
        }

        private static boolean allZero(final double[] v) {
            for (final double x : v) {
                if (Double.doubleToRawLongBits(x) != 0L) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public Iterator<TaskOutcome> apply(final Iterator<Integer> ignored) {
            return TaskFrame.member(settings, (m, task) -> {
                final long t1 = System.nanoTime();
                // Exact sums fold each source partition apart (from the zero, as the sum's definition says);
                // else the task folds its partitions into one vector.
                final Partition[][] folds;
                if (m.exactSums()) {
                    folds = new Partition[m.partitions().length][];
                    for (int p = 0; p < folds.length; p++) {
                        folds[p] = new Partition[] {m.partitions()[p]};
                    }
                } else {
                    folds = new Partition[][] {m.partitions()};
                }
                final double[][] mine = new double[folds.length][];
                for (int p = 0; p < folds.length; p++) {
                    final double[] start = zero == null ? new double[length] : Arrays.copyOf(zero, length);
                    final double[][] acc = {start};
                    TaskFrame.read(source, folds[p], r -> acc[0] = seqOp.apply(acc[0], r));
                    Inputs.requireVector(acc[0], length, "the fold of task " + task);
                    // The executor sums its tasks' vectors into the first: hand it an array of ours, never one the
                    // seqOp may have returned from elsewhere (a cached record, say).
                    mine[p] = acc[0] == start ? start : acc[0].clone();
                }
                final long t2 = System.nanoTime();
                final double[] sum = m.step(mine, global -> global);
                final TaskOutcome o = TaskOutcome.ok(task, m.reports() ? sum : null);
                o.workers = m.plan().workers();
                o.inMemory = m.plan().inMemory();
                o.shards = m.plan().inMemory() ? 0 : m.plan().shards().length;
                o.timings = m.timings(t2 - t1, System.nanoTime() - t2);
                return o;
            });
        }
    }
}

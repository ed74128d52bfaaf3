package org.switchml.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.Wire;
import scala.Function1;
import scala.collection.Iterator;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

import java.util.List;
import java.util.concurrent.TimeUnit;

/** Pre-launch validation and the barrier stage shared by the operator and the loop. */
final class Launch {
    private static final ClassTag<TaskOutcome> OUTCOME = ClassTag$.MODULE$.apply(TaskOutcome.class);

    private Launch() {
    }

    /**
     * Fails before launch, with the numbers, when a barrier stage of {@code partitions} tasks cannot run
     * as one switch job: more than 32 workers, dynamic allocation, or too few task slots.
     */
    static void validate(final SparkContext sc, final int partitions) {
        final boolean local = sc.isLocal();
        final boolean dynamic = sc.conf().getBoolean("spark.dynamicAllocation.enabled", false);
        check(partitions, Integer.MAX_VALUE, local, dynamic, sc.master(), "", 0);
        final long waitMs = local ? 0 : SwitchMLConfig.SLOT_WAIT.from(SwitchMLConfig.forCall(sc));
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        int slots = slots(sc);
        while (slots < partitions && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(200); // executors still registering: poll the condition, bounded
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            slots = slots(sc);
        }
        check(partitions, slots, local, dynamic, sc.master(), sc.conf().get("spark.task.cpus", "1"), waitMs);
    }

    /** The launch rules as a pure function (errors carry the numbers). */
    static void check(final int partitions, final int slots, final boolean local, final boolean dynamicAllocation,
                      final String master, final String taskCpus, final long waitedMs) {
        if (partitions > Wire.MAX_WORKERS) {
            throw new IllegalArgumentException("spark-switchml: the RDD has " + partitions + " partitions, but a "
                    + "switch job has at most " + Wire.MAX_WORKERS + " workers (one per partition); coalesce or "
                    + "repartition it to at most " + Wire.MAX_WORKERS);
        }
        if (!local && dynamicAllocation) {
            throw new IllegalStateException("spark-switchml: barrier stages need a fixed set of executors, but "
                    + "spark.dynamicAllocation.enabled=true; set it to false");
        }
        if (slots < partitions) {
            throw new IllegalStateException("spark-switchml: the barrier stage needs " + partitions
                    + " task slots (one per partition) but only " + slots + " are available (master " + master
                    + ", spark.task.cpus=" + taskCpus + (local ? "" : ", waited " + waitedMs + " ms per "
                    + SwitchMLConfig.SLOT_WAIT.key()) + "); reduce the partitions or add executors");
        }
    }

    private static int slots(final SparkContext sc) {
        return sc.maxNumConcurrentTasks(sc.resourceProfileManager().defaultResourceProfile());
    }

    /**
     * Runs {@code task} over {@code rdd} as a barrier stage and returns every task's outcome. The stage
     * ends in a shuffle (repartition(1)) so that it is a ShuffleMapStage: Spark resubmits a failed barrier
     * ShuffleMapStage as a whole, whereas it aborts the job on a failed barrier ResultStage.
     */
    static <T> List<TaskOutcome> runBarrier(final RDD<T> rdd,
                                            final Function1<Iterator<T>, Iterator<TaskOutcome>> task) {
        final RDD<TaskOutcome> barrier = rdd.barrier().mapPartitions(task, false, OUTCOME);
        return new JavaRDD<>(barrier, OUTCOME).repartition(1).collect();
    }

    /** Wraps a single outcome as a Scala iterator. */
    static Iterator<TaskOutcome> single(final TaskOutcome o) {
        return scala.jdk.javaapi.CollectionConverters.asScala(List.of(o).iterator());
    }

    /**
     * The reason a task found the switch unreachable, for the fallback's warning; throws instead when
     * {@code fallback} is {@code fail}.
     */
    static String unreachable(final TaskOutcome o, final SwitchMLConfig.Fallback fallback, final DriverRuntime rt) {
        final String reason = "partition " + o.partition + ": " + o.message;
        if (fallback == SwitchMLConfig.Fallback.FAIL) {
            throw new SwitchMLException("spark-switchml: switch " + rt.switchAddress() + " unreachable ("
                    + reason + "); " + SwitchMLConfig.FALLBACK.key() + "=fail");
        }
        rt.countFallback();
        return reason;
    }
}

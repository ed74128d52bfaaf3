package org.switchml.spark.executor;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.Partition;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The frame every barrier task of a switch call runs in on its executor: it joins the stage, reads the
 * source partitions the plan gave it, and turns the switch out of reach into an outcome the driver
 * falls back on.
 */
public final class TaskFrame {
    private TaskFrame() {}

    /** What a barrier task does once it is a member of its stage. */
    @FunctionalInterface
    public interface MemberWork {
        TaskOutcome run(StageMember member, int task);
    }

    /**
     * The frame of every barrier task: join the stage, run {@code work}, and report the switch out of
     * reach as an outcome (the driver then falls back). Any other failure fails the executor's part of
     * the stage at once, so its other tasks do not wait for this one, and fails the task.
     */
    public static Iterator<TaskOutcome> member(final TaskSettings settings, final MemberWork work) {
        final BarrierTaskContext ctx = BarrierTaskContext.get();
        final int task = ctx.partitionId();
        final StageMember m;
        try {
            m = StageMember.join(ctx, settings);
        } catch (final SwitchUnreachableException e) {
            return single(TaskOutcome.unreachable(task, e.getMessage()));
        }
        try (m) {
            return single(work.run(m, task));
        } catch (final SwitchUnreachableException e) {
            return single(TaskOutcome.unreachable(task, e.getMessage()));
        } catch (final RuntimeException | Error e) {
            m.fail(e instanceof RuntimeException re ? re : new SwitchMLException("task " + task + " failed: " + e, e));
            throw e;
        }
    }

    /** Wraps a single outcome as a Scala iterator. */
    public static Iterator<TaskOutcome> single(final TaskOutcome o) {
        return CollectionConverters.asScala(List.of(o).iterator());
    }

    /** Reads source partitions {@code parts} of {@code source} in this task (cached blocks, or computed). */
    public static <T> void read(final RDD<T> source, final Partition[] parts, final Consumer<T> sink) {
        final TaskContext ctx = TaskContext.get();
        for (final Partition p : parts) {
            final Iterator<T> it = source.iterator(p, ctx);
            while (it.hasNext()) {
                sink.accept(it.next());
            }
        }
    }

    /**
     * The records of each source partition of {@code parts} apart, in order, kept for a task that uses them in
     * every iteration (as {@link #readAll}).
     */
    public static <T> List<List<T>> readEach(final RDD<T> source, final Partition[] parts) {
        final List<List<T>> out = new ArrayList<>(parts.length);
        for (final Partition p : parts) {
            out.add(readAll(source, new Partition[] {p}));
        }
        return out;
    }

    /**
     * The records of source partitions {@code parts}, kept for a task that uses them in every iteration
     * (the source's iterators must not reuse their objects, as RDDs of objects do not).
     */
    public static <T> List<T> readAll(final RDD<T> source, final Partition[] parts) {
        final List<T> out = new ArrayList<>();
        read(source, parts, out::add);
        return out;
    }
}

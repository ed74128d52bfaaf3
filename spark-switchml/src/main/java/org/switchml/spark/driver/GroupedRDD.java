package org.switchml.spark.driver;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.Dependency;
import org.apache.spark.NarrowDependency;
import org.apache.spark.Partition;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * The RDD under a spark-switchml barrier stage: one partition per barrier task, whatever the source's
 * partition count. Each task reads the source partitions the stage's plan gives it (through
 * {@code source.iterator}, so cached blocks are used and anything else is computed), which lets an RDD
 * with hundreds of partitions run as one barrier stage on a few task slots.
 *
 * <p>Spark refuses a barrier stage whose RDD chain changes the partition count (a coalesce), so the
 * source is not declared as a narrow parent. Instead the shuffles the source reads are declared as this
 * RDD's dependencies: Spark runs those map stages first, and the barrier stage then reads their output.
 */
final class GroupedRDD extends RDD<Integer> {
    private static final long serialVersionUID = 1L;
    private final int tasks;

    GroupedRDD(final SparkContext sc, final RDD<?> source, final int tasks) {
        super(sc, CollectionConverters.asScala(shufflesUnder(source)).toSeq(), ClassTag$.MODULE$.apply(Integer.class));
        this.tasks = tasks;
    }

    /** The shuffle dependencies reachable from {@code rdd} through narrow dependencies. */
    static List<Dependency<?>> shufflesUnder(final RDD<?> rdd) {
        final List<Dependency<?>> out = new ArrayList<>();
        final Set<Integer> seen = new HashSet<>();
        final List<RDD<?>> todo = new ArrayList<>();
        todo.add(rdd);
        while (!todo.isEmpty()) {
            final RDD<?> r = todo.remove(todo.size() - 1);
            if (!seen.add(r.id())) {
                continue;
            }
            for (final Dependency<?> d : CollectionConverters.asJava(r.dependencies())) {
                if (d instanceof ShuffleDependency) {
                    out.add(d);
                } else if (d instanceof NarrowDependency) {
                    todo.add(d.rdd());
                }
            }
        }
        return out;
    }

    @Override
    public Iterator<Integer> compute(final Partition split, final TaskContext context) {
        return CollectionConverters.asScala(List.of(split.index()).iterator());
    }

    @Override
    public Partition[] getPartitions() {
        final Partition[] p = new Partition[tasks];
        for (int i = 0; i < tasks; i++) {
            p[i] = new Slot(i);
        }
        return p;
    }

    /** A barrier task's partition: just its index. */
    private record Slot(int index) implements Partition {}
}

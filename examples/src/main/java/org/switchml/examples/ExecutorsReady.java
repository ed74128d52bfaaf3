package org.switchml.examples;

import java.io.PrintStream;
import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * Waits, before the input is read, until every task slot the application asked for
 * ({@code spark.cores.max / spark.task.cpus}) can run a task. An executor takes tasks only once it has
 * fetched the application's jars from the driver; input read before that is cached on the executors that
 * were ready first, and every later stage reads it from there over the network. A barrier stage with one
 * task per slot starts only when all its tasks can start at once, so it is the test.
 */
final class ExecutorsReady {
    private ExecutorsReady() {}

    /**
     * Waits for {@code spark.cores.max / spark.task.cpus} slots; returns at once when that is under 2 (or
     * {@code spark.cores.max} is not set, as on a local master).
     *
     * @return whether every slot was ready within {@code timeoutS} seconds
     */
    static boolean await(final SparkContext sc, final long timeoutS, final PrintStream out) {
        final int cpus = Math.max(1, sc.conf().getInt("spark.task.cpus", 1));
        return await(sc, sc.conf().getInt("spark.cores.max", 0) / cpus, timeoutS, out);
    }

    /**
     * Waits at most {@code timeoutS} seconds until {@code slots} tasks can run at once, and prints one line
     * saying how long it took or that not all were ready. On time-out the waiting job is cancelled; Spark may
     * still hold its submission until its own barrier checks give up.
     *
     * @return whether every slot was ready in time
     */
    static boolean await(final SparkContext sc, final int slots, final long timeoutS, final PrintStream out) {
        if (slots < 2) {
            return true;
        }
        final long t0 = System.nanoTime();
        final String group = "switchml-examples-executors-ready-" + t0;
        final JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
        final List<Integer> ones = IntStream.range(0, slots).boxed().toList();
        final CompletableFuture<Long> job = CompletableFuture.supplyAsync(() -> {
            jsc.setJobGroup(group, "wait until every task slot can run a task", true);
            try {
                return jsc.parallelize(ones, slots)
                        .rdd()
                        .barrier()
                        .mapPartitions(new Identity(), false, ClassTag$.MODULE$.apply(Integer.class))
                        .count();
            } finally {
                // The group is a property of this pooled thread: later jobs submitted from it are not in it.
                jsc.clearJobGroup();
            }
        });
        try {
            job.get(timeoutS, TimeUnit.SECONDS);
            out.printf(
                    Locale.ROOT, "executors ready: %d task slots in %.1f s%n", slots, (System.nanoTime() - t0) / 1e9);
            return true;
        } catch (final TimeoutException e) {
            sc.cancelJobGroup(group);
            out.printf(
                    Locale.ROOT,
                    "executors ready: not all %d task slots within %d s; reading the input on those" + " that are%n",
                    slots,
                    timeoutS);
            return false;
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            sc.cancelJobGroup(group);
            throw new IllegalStateException("interrupted while waiting for " + slots + " task slots", e);
        } catch (final ExecutionException e) {
            throw new IllegalStateException(
                    "waiting for " + slots + " task slots failed: " + e.getCause(), e.getCause());
        }
    }

    /** The barrier stage's task: nothing to do but to start. */
    private static final class Identity extends AbstractFunction1<Iterator<Integer>, Iterator<Integer>>
            implements Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public Iterator<Integer> apply(final Iterator<Integer> it) {
            return it;
        }
    }
}

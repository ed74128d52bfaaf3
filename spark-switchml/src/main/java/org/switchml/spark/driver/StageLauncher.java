package org.switchml.spark.driver;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.Dependency;
import org.apache.spark.OneToOneDependency;
import org.apache.spark.Partition;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.util.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.executor.Inputs;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;
import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * How a switch call becomes barrier stages: the pre-launch checks, the number of tasks (the task slots
 * there are, at most one per source partition), where each source partition is cached, and the
 * attempts: a failed stage is run again as a new Spark job under the next job generation, up to
 * {@code spark.switchml.stageAttempts} times. Running the barrier stage as the job's result stage lets
 * task 0's result reach the driver directly, with no extra shuffle.
 */
public final class StageLauncher {
    private static final Logger LOG = LoggerFactory.getLogger(StageLauncher.class);
    private static final ClassTag<TaskOutcome> OUTCOME = ClassTag$.MODULE$.apply(TaskOutcome.class);
    private static final Pattern LOCAL_CLUSTER = Pattern.compile("local-cluster\\[\\s*(\\d+)\\s*,\\s*(\\d+)\\s*,.*\\]");

    /** The local property naming the attempt, which a barrier task can read. */
    public static final String ATTEMPT_PROPERTY = "spark.switchml.attempt";

    /** Spark's dynamic allocation switch: while it is in effect, Spark runs no barrier stage. */
    public static final String DYNAMIC_ALLOCATION = "spark.dynamicAllocation.enabled";

    private StageLauncher() {}

    /** The barrier task of one attempt. */
    @FunctionalInterface
    public interface TaskFactory {
        Function1<Iterator<Integer>, Iterator<TaskOutcome>> task(TaskSettings settings);
    }

    /**
     * Runs one switch call over {@code source}: returns every task's outcome of the attempt that
     * completed, or a single driver-side UNREACHABLE outcome when the switch is known to be down.
     */
    public static List<TaskOutcome> run(
            final RDD<?> source, final DriverRuntime rt, final int jobId, final TaskFactory factory) {
        return run(source, rt, jobId, null, factory);
    }

    /** As {@link #run(RDD, DriverRuntime, int, TaskFactory)} in {@code precision} (null: as configured). */
    public static List<TaskOutcome> run(
            final RDD<?> source,
            final DriverRuntime rt,
            final int jobId,
            final SwitchMLConfig.Precision precision,
            final TaskFactory factory) {
        final SparkContext sc = source.sparkContext();
        final int partitions = source.getNumPartitions();
        checkCluster(sc.conf());
        if (rt.availableRegistrar() == null) {
            return List.of(TaskOutcome.unreachable(-1, rt.unreachableReason()));
        }
        final String[] preferred = preferredExecutors(sc, source, partitions);
        final Partition[] sourcePartitions = source.partitions();
        final int attempts = SwitchMLConfig.STAGE_ATTEMPTS.from(SwitchMLConfig.forCall(sc));
        final boolean localShortcut = SwitchMLConfig.LOCAL_SHORTCUT.from(SwitchMLConfig.forCall(sc));
        for (int attempt = 0; ; attempt++) {
            if (attempt > 0) {
                rt.availableRegistrar(); // an extra shard host lost in the failed attempt may answer again
            }
            final int slots = waitForSlots(sc);
            final int tasks = Math.min(partitions, slots);
            final TaskSettings s = TaskSettings.resolve(sc, jobId, attempt, tasks, precision);
            rt.beginStage(s, preferred, sourcePartitions, slots, localShortcut);
            final long t0 = System.nanoTime();
            final String previous = sc.getLocalProperty(ATTEMPT_PROPERTY);
            sc.setLocalProperty(ATTEMPT_PROPERTY, Integer.toString(attempt));
            try {
                final RDD<TaskOutcome> barrier =
                        new GroupedRDD(sc, source, tasks).barrier().mapPartitions(factory.task(s), false, OUTCOME);
                final List<TaskOutcome> out = Arrays.asList((TaskOutcome[]) barrier.collect());
                report(s, out, t0, System.nanoTime(), rt.endStage(s));
                return out;
            } catch (final Exception e) { // collect() throws SparkException without declaring it
                if (attempt + 1 >= attempts || sc.isStopped() || cancelled(e) || badInput(e)) {
                    throw StageLauncher.<RuntimeException>rethrow(e);
                }
                final String gone = rt.goneShards(s.stageKey(), liveExecutors(sc));
                LOG.warn(
                        "spark-switchml: stage {} of job {} failed ({}){}; running it again as generation {} ({} of {} "
                                + "attempts)",
                        s.stageKey(),
                        Integer.toUnsignedString(jobId),
                        firstLine(e),
                        gone.isEmpty() ? "" : "; Spark lost " + gone,
                        attempt + 1,
                        attempt + 2,
                        attempts);
            } finally {
                sc.setLocalProperty(ATTEMPT_PROPERTY, previous);
                rt.endStage(s);
            }
        }
    }

    /** The executors Spark has now (the driver is none). */
    private static java.util.Set<String> liveExecutors(final SparkContext sc) {
        return new java.util.HashSet<>(CollectionConverters.asJava(sc.getExecutorIds()));
    }

    @SuppressWarnings("unchecked")
    private static <E extends Exception> E rethrow(final Exception e) throws E {
        throw (E) e;
    }

    private static boolean cancelled(final Exception e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            final String m = t.getMessage();
            if (m != null && (m.contains("cancelled") || m.contains("SparkContext was shut down"))) {
                return true;
            }
            if (t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /** Bad input fails every attempt alike: do not retry it. */
    private static boolean badInput(final Exception e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof Inputs.BadInputException
                    || String.valueOf(t.getMessage()).contains(Inputs.BadInputException.class.getName())) {
                return true;
            }
        }
        return false;
    }

    private static String firstLine(final Throwable e) {
        final String m = String.valueOf(e.getMessage());
        final int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /**
     * Where each partition of {@code rdd} is cached: the executor id, or null. The blocks of {@code rdd}, or
     * of the cached RDD it maps one to one, come from the block manager master: the scheduler's own view
     * ({@code getPreferredLocs}) is refreshed only when a job is submitted, so right after the job that
     * cached them it still finds them nowhere, and the stage would read every partition remotely.
     */
    static String[] preferredExecutors(final SparkContext sc, final RDD<?> rdd, final int partitions) {
        final String[] out = new String[partitions];
        final RDD<?> cached = cachedAncestor(rdd);
        if (cached != null && cached.getNumPartitions() == partitions) {
            final BlockId[] ids = new BlockId[partitions];
            for (int p = 0; p < partitions; p++) {
                ids[p] = new RDDBlockId(cached.id(), p);
            }
            final IndexedSeq<Seq<BlockManagerId>> where =
                    sc.env().blockManager().master().getLocations(ids);
            for (int p = 0; p < partitions; p++) {
                for (final BlockManagerId b : CollectionConverters.asJava(where.apply(p))) {
                    out[p] = b.executorId();
                    break;
                }
            }
        }
        for (int p = 0; p < partitions; p++) {
            if (out[p] != null) {
                continue;
            }
            // TaskLocation prints as executor_<host>_<executorId> for a cached block.
            for (final Object loc : CollectionConverters.asJava(sc.getPreferredLocs(rdd, p))) {
                final String text = loc.toString();
                if (text.startsWith("executor_")) {
                    final int cut = text.lastIndexOf('_');
                    out[p] = text.substring(cut + 1);
                    break;
                }
            }
        }
        return out;
    }

    /** {@code rdd} when it is persisted, else its persisted ancestor through one-to-one dependencies, or null. */
    private static RDD<?> cachedAncestor(final RDD<?> rdd) {
        RDD<?> r = rdd;
        while (StorageLevel.NONE().equals(r.getStorageLevel())) {
            final List<Dependency<?>> deps = CollectionConverters.asJava(r.dependencies());
            if (deps.size() != 1 || !(deps.get(0) instanceof OneToOneDependency)) {
                return null;
            }
            r = deps.get(0).rdd();
        }
        return r;
    }

    /**
     * Whether Spark refuses barrier stages under {@code conf}. Spark 4.0.1's DAGScheduler, as it creates a
     * stage, fails the job of any barrier RDD with {@code BarrierJobRunWithDynamicAllocationException}
     * whenever dynamic allocation is in effect ({@code Utils.isDynamicAllocationEnabled}): {@value
     * #DYNAMIC_ALLOCATION}=true with any master but {@code local} and {@code local[...]} ({@code
     * local-cluster} included), or with {@code spark.dynamicAllocation.testing=true} on those. No other
     * setting lifts it (equal minimum and maximum executors, shuffle tracking, an external shuffle service).
     * This asks Spark's own test, so that the two cannot disagree.
     */
    public static boolean barrierStagesRefused(final SparkConf conf) {
        return Utils.isDynamicAllocationEnabled(conf);
    }

    /** Why no switch call can run while Spark refuses barrier stages; names the setting. */
    public static String dynamicAllocationReason() {
        return DYNAMIC_ALLOCATION + "=true: Spark runs no barrier stage under dynamic allocation (a barrier "
                + "stage needs all its tasks at once, and dynamic allocation adds and removes executors)";
    }

    /** Fails, naming the setting, when Spark would refuse the call's barrier stages. */
    static void checkCluster(final SparkConf conf) {
        if (barrierStagesRefused(conf)) {
            throw new IllegalStateException("spark-switchml: " + dynamicAllocationReason() + "; set "
                    + DYNAMIC_ALLOCATION + "=false to aggregate through the switch");
        }
    }

    /**
     * For a call that may fall back: the reason when Spark refuses barrier stages under {@code conf}, counted
     * as a fallback; null when it runs them. Throws instead when {@code fallback} is {@code fail}.
     */
    public static String refusedFallback(
            final SparkConf conf, final SwitchMLConfig.Fallback fallback, final DriverRuntime rt) {
        if (!barrierStagesRefused(conf)) {
            return null;
        }
        if (fallback == SwitchMLConfig.Fallback.FAIL) {
            throw new SwitchMLException("spark-switchml: " + dynamicAllocationReason() + "; set "
                    + DYNAMIC_ALLOCATION + "=false to aggregate through the switch (" + SwitchMLConfig.FALLBACK.key()
                    + "=fail)");
        }
        rt.countFallback();
        return dynamicAllocationReason();
    }

    /**
     * The task slots to use: on a cluster, waits (bounded by {@code spark.switchml.slotWaitTimeout}) for
     * the slots the application asked for, then takes what there is, but at least one.
     */
    static int waitForSlots(final SparkContext sc) {
        int slots = slots(sc);
        if (sc.isLocal()) {
            return Math.max(1, slots);
        }
        final int expected = expectedSlots(
                sc.master(),
                sc.conf().get("spark.executor.instances", ""),
                sc.conf().get("spark.executor.cores", ""),
                sc.conf().getInt("spark.task.cpus", 1));
        final long waitMs = SwitchMLConfig.SLOT_WAIT.from(SwitchMLConfig.forCall(sc));
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while ((slots < 1 || slots < expected) && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(100); // executors still registering: poll the condition, bounded
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SwitchMLException("interrupted while waiting for executors");
            }
            slots = slots(sc);
        }
        if (slots < 1) {
            throw new IllegalStateException("spark-switchml: no executor registered within " + waitMs + " ms ("
                    + SwitchMLConfig.SLOT_WAIT.key() + ", master " + sc.master() + ")");
        }
        return slots;
    }

    /** Task slots the master was asked for, when the settings say (0: unknown). */
    static int expectedSlots(final String master, final String instances, final String cores, final int taskCpus) {
        final Matcher m = LOCAL_CLUSTER.matcher(master.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            return Integer.parseInt(m.group(1)) * Integer.parseInt(m.group(2)) / Math.max(1, taskCpus);
        }
        if (!instances.isEmpty() && !cores.isEmpty()) {
            try {
                return Integer.parseInt(instances.trim()) * Integer.parseInt(cores.trim()) / Math.max(1, taskCpus);
            } catch (final NumberFormatException e) {
                return 0;
            }
        }
        return 0;
    }

    private static int slots(final SparkContext sc) {
        return sc.maxNumConcurrentTasks(sc.resourceProfileManager().defaultResourceProfile());
    }

    /** Logs where the stage's time went (debug) so that fixed costs can be measured. */
    private static void report(
            final TaskSettings s,
            final List<TaskOutcome> out,
            final long submitNs,
            final long doneNs,
            final long[] driver) {
        if (!LOG.isDebugEnabled() || driver == null) {
            return;
        }
        final long jobNs = doneNs - submitNs;
        final long[] max = new long[TaskOutcome.TIMINGS];
        long firstHello = Long.MAX_VALUE;
        long lastEnd = Long.MIN_VALUE;
        for (final TaskOutcome o : out) {
            if (o.timings != null) {
                for (int i = 0; i < max.length; i++) {
                    max[i] = Math.max(max[i], o.timings[i]);
                }
                if (o.timings.length > 8) {
                    firstHello = Math.min(firstHello, o.timings[4]);
                    lastEnd = Math.max(lastEnd, o.timings[8]);
                }
            }
        }
        // The tasks' marks are System.nanoTime() of their JVMs: comparable with the driver's only on one host
        // (local-cluster), so Spark's part is split into before and after the tasks only when it makes sense.
        final String spark = firstHello >= submitNs && lastEnd >= firstHello && lastEnd <= doneNs
                ? String.format(
                        "Spark's scheduling until the first hello %.1f ms, from the last task's end to the "
                                + "result on the driver %.1f ms",
                        ms(firstHello - submitNs), ms(doneNs - lastEnd))
                : "the rest is Spark's scheduling and the result's way back";
        if (LOG.isTraceEnabled()) {
            final StringBuilder sb = new StringBuilder();
            for (final TaskOutcome o : out) {
                if (o.timings != null && o.timings.length > 9) {
                    final long[] t = o.timings;
                    sb.append(String.format(
                            " | task %d rank %d: hello %.1f plan %.1f switch %.1f-%.1f end %.1f",
                            o.partition,
                            t[9],
                            ms(t[4] - firstHello),
                            ms(t[5] - firstHello),
                            ms(t[6] - firstHello),
                            ms(t[7] - firstHello),
                            ms(t[8] - firstHello)));
                }
            }
            LOG.trace("spark-switchml: stage {} timeline (ms from the first hello){}", s.stageKey(), sb);
        }
        LOG.debug(
                "spark-switchml: stage {} with {} tasks: job {} ms; hellos arrived over {} ms, job installed in {} ms; "
                        + "slowest task: rendezvous {} ms, read+compute {} ms, steps {} ms (last allreduce {} ms); {}",
                s.stageKey(),
                s.tasks(),
                ms(jobNs),
                ms(driver[0]),
                ms(driver[1]),
                ms(max[0]),
                ms(max[1]),
                ms(max[2]),
                ms(max[3]),
                spark);
    }

    private static double ms(final long ns) {
        return Math.round(ns / 1e4) / 100.0;
    }

    /**
     * The reason a task found the switch unreachable, for the fallback's warning; throws instead when
     * {@code fallback} is {@code fail}.
     */
    public static String unreachable(
            final TaskOutcome o, final SwitchMLConfig.Fallback fallback, final DriverRuntime rt) {
        final String reason = (o.partition < 0 ? "" : "task " + o.partition + ": ") + o.message;
        if (fallback == SwitchMLConfig.Fallback.FAIL) {
            throw new SwitchMLException("spark-switchml: switch " + rt.switchName() + " unreachable (" + reason + "); "
                    + SwitchMLConfig.FALLBACK.key() + "=fail");
        }
        rt.countFallback();
        return reason;
    }
}

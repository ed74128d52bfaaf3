package org.switchml.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.driver.StageLauncher;
import org.switchml.spark.executor.Inputs;
import org.switchml.spark.executor.StageMember;
import org.switchml.spark.executor.TaskFrame;
import org.switchml.spark.messages.PackedVector;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskOutcome;
import org.switchml.spark.messages.TaskSettings;
import scala.Function1;
import scala.collection.Iterator;

/**
 * The replicated loop for iterative algorithms: one barrier stage runs many iterations. In each, every
 * task computes its records' vector, the tasks of an executor sum theirs in memory, each executor
 * allreduces its vector through the switch, and applies the same deterministic {@link Body#update} to
 * its copy of the state, which its tasks then share. There is no Spark job, broadcast or driver round
 * trip per iteration; the driver gets the final state and the per-iteration scalars from task 0 only.
 *
 * <p>Any number of partitions works: each task of the stage reads the partitions the stage's plan gives
 * it (those cached on its executor first) once, and keeps their records for every iteration. With exact sums
 * ({@code spark.switchml.exactSums}, the default) a task computes each source partition's contribution apart, and
 * the sums are the same bits whichever executor reads which partition; then a contribution is one partition's.
 *
 * <p>Checkpoints ({@link Options#checkpointIterations}, {@link Options#checkpointSeconds}) end the
 * stage and return the state to the driver, which starts the next stage from it: a failure then retries
 * only the current stage, i.e. resumes from the last checkpoint. The seconds rule is decided by task 0
 * and agreed through the allreduce itself (one extra element), so every task stops after the same
 * iteration. {@link Progress#onStageStarted} hears of each stage before it starts, and {@link Result#stages}
 * says how each went.
 *
 * <p>All executors receive bit-identical sums, so a deterministic update keeps every copy of the state
 * identical.
 *
 * <p>Spark refuses barrier stages while dynamic allocation is in effect ({@code
 * spark.dynamicAllocation.enabled=true} on a cluster, see {@link SwitchMLDriver#barrierStagesRefused}): then
 * {@link #run} fails with an {@link IllegalStateException} naming the setting, whatever {@code
 * spark.switchml.fallback} says; {@link #runOnDriver} runs the same loop without barrier stages.
 */
public final class ReplicatedLoop {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedLoop.class);

    private ReplicatedLoop() {}

    /**
     * The algorithm. Both methods run inside tasks (and, for {@link #runOnDriver}, on the driver).
     *
     * @param <T> record type
     */
    public interface Body<T> extends Serializable {
        /**
         * The contribution of {@code records} for {@code iteration}; length {@code vectorLength}. Called by
         * several tasks of one executor at once with the same {@code state}, which it must not modify.
         * Contributions are summed, so a task's vector must be the sum of its records' parts. Return a new
         * array: the loop owns it (an executor sums its tasks' vectors into the first of them).
         */
        double[] contribution(List<T> records, double[] state, int iteration);

        /**
         * As {@link #contribution(List, double[], int)}, offered {@code spare}: null, or the array this task
         * returned for an earlier iteration of the same stage, which the loop no longer reads (its contents are
         * undefined: the executor may have summed into it, and the switch's sum replaced it). A body may fill
         * and return it instead of a new array, provided its {@link #update} never keeps the sum it is given.
         * With 10^7-element vectors that spares the garbage collector 80 MB per task and iteration.
         */
        default double[] contribution(
                final List<T> records, final double[] state, final int iteration, final double[] spare) {
            return contribution(records, state, iteration);
        }

        /**
         * The next state from the sum of all contributions; must be deterministic. Runs once per executor
         * and iteration; the executor's tasks share the state it returns.
         */
        Step update(double[] state, double[] sum, int iteration);

        /**
         * Called by each task when its stage of the loop ends (finished, checkpointed or failed), and on the
         * driver when a loop run there ends: a body can drop what it cached in the JVM for the stage.
         */
        default void stageEnded() {}
    }

    /**
     * One iteration's outcome.
     *
     * @param state     the new state
     * @param scalars   values to report to the driver for this iteration (e.g. the loss); same length every iteration
     * @param converged stop after this iteration
     */
    public record Step(double[] state, double[] scalars, boolean converged) implements Serializable {}

    /**
     * How long to run, when to checkpoint, and in which precision to sum.
     *
     * @param maxIterations        iterations in all
     * @param checkpointIterations return the state to the driver every this many iterations (0: never)
     * @param checkpointSeconds    return the state to the driver after a stage has run this long (0: never)
     * @param precision            encoding of the sums through the switch; null: {@code spark.switchml.precision}
     *                             as configured for the call
     */
    public record Options(
            int maxIterations, int checkpointIterations, double checkpointSeconds, SwitchMLConfig.Precision precision)
            implements Serializable {
        public Options {
            if (maxIterations < 0 || checkpointIterations < 0 || checkpointSeconds < 0) {
                throw new IllegalArgumentException("loop options must be >= 0: " + maxIterations + ", "
                        + checkpointIterations + ", " + checkpointSeconds);
            }
        }

        /** In the precision configured for the call. */
        public Options(final int maxIterations, final int checkpointIterations, final double checkpointSeconds) {
            this(maxIterations, checkpointIterations, checkpointSeconds, null);
        }
    }

    /**
     * The loop's outcome.
     *
     * @param state       the final state
     * @param iterations  iterations run
     * @param scalars     the scalars of every iteration, in order
     * @param converged   whether {@link Step#converged} stopped the loop
     * @param checkpoints iteration counts at which the state came back to the driver (stage ends, and the ends of
     *                    the fallback's runs on the driver)
     * @param jobIds      the switch job id of each stage (empty on the driver path)
     * @param viaSwitch   false when any iteration ran on the driver (fallback); true also for a stage summed
     *                    in memory, which computes what the switch would
     * @param inMemoryStages stages whose tasks all ran in one executor, which computed the switch's sum
     *                    itself, bit for bit, sending no packet ({@code spark.switchml.localShortcut})
     * @param stages      every stage of the loop, in order: a barrier stage, or a run on the driver where a
     *                    stage found the switch unreachable (empty on the driver path)
     */
    public record Result(
            double[] state,
            int iterations,
            List<double[]> scalars,
            boolean converged,
            List<Integer> checkpoints,
            List<Integer> jobIds,
            boolean viaSwitch,
            int inMemoryStages,
            List<Stage> stages) {}

    /**
     * One stage of a loop, from its start (the start of the loop, or a checkpoint) to the next checkpoint.
     *
     * @param firstIteration the loop's iteration it started at; its scalars are {@link Result#scalars()} from there
     * @param iterations     iterations it ran
     * @param jobId          its switch job
     * @param viaSwitch      false when it found the switch unreachable and its iterations ran on the driver
     * @param inMemory       whether its tasks all ran in one executor, which computed the switch's sums itself
     */
    public record Stage(int firstIteration, int iterations, int jobId, boolean viaSwitch, boolean inMemory) {}

    /**
     * Told on the driver after every iteration, while the loop runs (also on the driver path). Called on
     * one spark-switchml thread, in iteration order; it must not block for long.
     */
    @FunctionalInterface
    public interface Progress {
        /**
         * @param iteration the iteration that just ended (0-based)
         * @param scalars   its {@link Step#scalars()}
         * @param nanos     time since the previous report (or the loop's start), as measured where it ran
         */
        void onIteration(int iteration, double[] scalars, long nanos);

        /**
         * As {@link #onIteration(int, double[], long)}, naming the switch job of the stage that ran the
         * iteration ({@code -1} on the driver path), e.g. to read its live counters from an embedded switch.
         * The loop calls this one; by default it drops the job id.
         */
        default void onIteration(final int iteration, final double[] scalars, final long nanos, final int jobId) {
            onIteration(iteration, scalars, nanos);
        }

        /**
         * A stage of the loop is about to start at iteration {@code iteration} from {@code state} (which it must
         * not modify): before its barrier stage is submitted, on the thread that called {@link #run}, so that it
         * may set that thread's job properties (e.g. the job description, which names the stage in the UI). If
         * the stage finds the switch unreachable, its iterations up to the next checkpoint run on the driver
         * without another call.
         */
        default void onStageStarted(final int iteration, final double[] state) {}
    }

    /** Runs the loop over {@code data} through the switch. */
    public static <T> Result run(
            final JavaRDD<T> data,
            final double[] initialState,
            final int vectorLength,
            final Body<T> body,
            final Options options) {
        return run(data.rdd(), initialState, vectorLength, body, options, null);
    }

    /** Runs the loop over {@code data} through the switch. */
    public static <T> Result run(
            final RDD<T> data,
            final double[] initialState,
            final int vectorLength,
            final Body<T> body,
            final Options options) {
        return run(data, initialState, vectorLength, body, options, null);
    }

    /**
     * Runs the loop over {@code data} through the switch, telling {@code progress} (when not null) about
     * every iteration as it ends: the executor of task 0 sends each iteration's scalars to the driver.
     */
    public static <T> Result run(
            final RDD<T> data,
            final double[] initialState,
            final int vectorLength,
            final Body<T> body,
            final Options options,
            final Progress progress) {
        final SparkContext sc = data.sparkContext();
        final SwitchMLConfig.Fallback fallback = SwitchMLConfig.FALLBACK.from(SwitchMLConfig.forCall(sc));
        final DriverRuntime rt = DriverRuntimes.forContext(sc);
        final Gate gate = progress == null ? null : new Gate(progress);
        final long progressId = gate == null
                ? 0
                : rt.addProgress(p -> gate.onIteration(p.iteration(), p.scalars(), p.nanos(), p.jobId()));
        try {
            return loop(data, initialState, vectorLength, body, options, gate, progressId, sc, fallback, rt);
        } finally {
            if (progress != null) {
                rt.removeProgress(progressId);
            }
        }
    }

    /**
     * Passes every iteration to the listener exactly once and in order: live reports from task 0 as they
     * come, and, after each stage, whatever the driver has not seen yet (a report still on its way).
     */
    private static final class Gate implements Progress {
        private final Progress listener;
        private int next;

        Gate(final Progress listener) {
            this.listener = listener;
        }

        @Override
        public void onIteration(final int iteration, final double[] scalars, final long nanos) {
            onIteration(iteration, scalars, nanos, -1);
        }

        @Override
        public synchronized void onIteration(
                final int iteration, final double[] scalars, final long nanos, final int jobId) {
            if (iteration == next) {
                next++;
                listener.onIteration(iteration, scalars, nanos, jobId);
            }
        }

        @Override
        public void onStageStarted(final int iteration, final double[] state) {
            listener.onStageStarted(iteration, state);
        }

        /** The stage of job {@code jobId} that started at {@code start} ended with these per-iteration scalars. */
        synchronized void stageEnded(final int start, final List<double[]> scalars, final int jobId) {
            for (int i = Math.max(0, next - start); i < scalars.size(); i++) {
                onIteration(start + i, scalars.get(i), -1, jobId);
            }
        }
    }

    private static <T> Result loop(
            final RDD<T> data,
            final double[] initialState,
            final int vectorLength,
            final Body<T> body,
            final Options options,
            final Gate progress,
            final long progressId,
            final SparkContext sc,
            final SwitchMLConfig.Fallback fallback,
            final DriverRuntime rt) {
        double[] state = initialState.clone();
        int done = 0;
        boolean converged = false;
        final List<double[]> scalars = new ArrayList<>();
        final List<Integer> checkpoints = new ArrayList<>();
        final List<Integer> jobIds = new ArrayList<>();
        boolean viaSwitch = true;
        int inMemoryStages = 0;
        final List<Stage> stages = new ArrayList<>();
        while (done < options.maxIterations() && !converged) {
            if (progress != null) {
                progress.onStageStarted(done, state);
            }
            final int jobId = rt.newJobId();
            jobIds.add(jobId);
            final double[] from = state;
            final int start = done;
            final List<TaskOutcome> outcomes;
            try {
                outcomes = StageLauncher.run(
                        data,
                        rt,
                        jobId,
                        options.precision(),
                        s -> new LoopTask<>(s, data, from, start, vectorLength, body, options, progressId));
            } finally {
                rt.remove(jobId);
            }
            TaskOutcome first = null;
            TaskOutcome unreachable = null;
            for (final TaskOutcome o : outcomes) {
                if (o.status == TaskOutcome.UNREACHABLE && unreachable == null) {
                    unreachable = o;
                }
                if (o.vector != null) {
                    first = o;
                }
            }
            if (unreachable != null) {
                // The stage's iterations are lost with it: resume from the last checkpoint (state, done). Run on
                // the driver only up to the next checkpoint, then try the switch again: a switch that came back
                // (restarted) gets the next stage as a new registration, one still down costs no stage.
                final String reason = StageLauncher.unreachable(unreachable, fallback, rt);
                final int until = options.checkpointIterations() > 0
                        ? (int) Math.min(options.maxIterations(), (long) done + options.checkpointIterations())
                        : options.maxIterations();
                LOG.warn(
                        "spark-switchml: switch {} unreachable ({}); running iterations {} to {} of the loop on the "
                                + "driver with treeAggregate ({}=treeAggregate){}",
                        rt.switchName(),
                        reason,
                        done,
                        until - 1,
                        SwitchMLConfig.FALLBACK.key(),
                        until < options.maxIterations() ? ", then trying the switch again" : "");
                final Result rest = driverLoop(data, state, done, until, vectorLength, body, progress);
                scalars.addAll(rest.scalars());
                state = rest.state();
                stages.add(new Stage(done, rest.iterations() - done, jobId, false, false));
                done = rest.iterations();
                converged = rest.converged();
                checkpoints.add(done);
                viaSwitch = false;
                continue;
            }
            if (first == null) {
                throw new IllegalStateException("spark-switchml: loop job " + jobId + " returned nothing from task 0");
            }
            state = first.vector;
            if (first.inMemory) {
                inMemoryStages++;
            }
            for (int i = 0; i < first.iterations; i++) {
                scalars.add(Arrays.copyOfRange(first.scalars, i * first.scalarWidth, (i + 1) * first.scalarWidth));
            }
            if (progress != null) {
                progress.stageEnded(done, scalars.subList(done, scalars.size()), jobId);
            }
            stages.add(new Stage(done, first.iterations, jobId, true, first.inMemory));
            done += first.iterations;
            converged = first.converged;
            checkpoints.add(done);
        }
        return new Result(state, done, scalars, converged, checkpoints, jobIds, viaSwitch, inMemoryStages, stages);
    }

    /**
     * The same loop run on the driver with one treeAggregate job per iteration (the state travels in
     * each job's closure): the reference, the baseline and the fallback.
     */
    public static <T> Result runOnDriver(
            final JavaRDD<T> data,
            final double[] initialState,
            final int vectorLength,
            final Body<T> body,
            final Options options) {
        return driverLoop(data.rdd(), initialState.clone(), 0, options.maxIterations(), vectorLength, body, null);
    }

    /** Iterations {@code from} to {@code until - 1} (fewer when the body converges), on the driver. */
    private static <T> Result driverLoop(
            final RDD<T> data,
            final double[] start,
            final int from,
            final int until,
            final int vectorLength,
            final Body<T> body,
            final Progress progress) {
        final JavaRDD<T> j = JavaRDD.fromRDD(data, data.elementClassTag());
        try {
            return driverSteps(j, start, from, until, vectorLength, body, progress);
        } finally {
            body.stageEnded();
        }
    }

    private static <T> Result driverSteps(
            final JavaRDD<T> j,
            final double[] start,
            final int from,
            final int until,
            final int vectorLength,
            final Body<T> body,
            final Progress progress) {
        double[] state = start;
        final List<double[]> scalars = new ArrayList<>();
        int it = from;
        boolean converged = false;
        long last = System.nanoTime();
        while (it < until && !converged) {
            final double[] s = state;
            final int iteration = it;
            final double[] sum = j.mapPartitions(records -> {
                        final List<T> list = new ArrayList<>();
                        records.forEachRemaining(list::add);
                        final double[] v = body.contribution(list, s, iteration);
                        checkLength(v, vectorLength);
                        return List.of(v).iterator();
                    })
                    .treeAggregate(new double[vectorLength], SwitchMLAggregator::addInto, SwitchMLAggregator::addInto);
            final Step step = body.update(state, sum, it);
            state = step.state();
            scalars.add(step.scalars());
            converged = step.converged();
            if (progress != null) {
                final long now = System.nanoTime();
                progress.onIteration(it, step.scalars() == null ? new double[0] : step.scalars(), now - last);
                last = now;
            }
            it++;
        }
        return new Result(state, it, scalars, converged, List.of(), List.of(), false, 0, List.of());
    }

    static void checkLength(final double[] v, final int expected) {
        if (v == null || v.length != expected) {
            throw new IllegalArgumentException(
                    "contribution has length " + (v == null ? "null" : v.length) + ", expected " + expected);
        }
    }

    /** What an executor's step gives its tasks: the new state and whether partition 0 asked to checkpoint. */
    private record ExecutorStep(Step step, boolean checkpoint) {}

    /**
     * Per executor JVM: the first state of each running loop stage attempt (by its stage key and Spark's
     * attempt number), taken by its first task and shared with the others until the first step replaced it.
     */
    private static final ConcurrentMap<String, double[]> FIRST_STATES = new ConcurrentHashMap<>();

    /**
     * One stage of the loop: iterations from {@code start} until a checkpoint, convergence or the end.
     * Each task computes its records' contribution; the executor's step (allreduce, then
     * {@link Body#update}) runs once per executor, and its tasks share the new state.
     */
    private static final class LoopTask<T>
            implements Function1<Iterator<Integer>, Iterator<TaskOutcome>>, Serializable {
        private static final long serialVersionUID = 1L;
        private final TaskSettings settings;
        private final RDD<T> source;
        /** The stage's first state, packed: a first model is mostly zeros, and every task deserializes it. */
        private final PackedVector state;

        private final int start;
        private final int length;
        private final Body<T> body;
        private final Options options;
        private final long progressId;

        LoopTask(
                final TaskSettings settings,
                final RDD<T> source,
                final double[] state,
                final int start,
                final int length,
                final Body<T> body,
                final Options options,
                final long progressId) {
            this.progressId = progressId;
            this.settings = settings;
            this.source = source;
            this.state = new PackedVector(state);
            this.start = start;
            this.length = length;
            this.body = body;
            this.options = options;
        }

        @Override
        public Iterator<TaskOutcome> apply(final Iterator<Integer> ignored) {
            return TaskFrame.member(settings, this::iterate);
        }

        private TaskOutcome iterate(final StageMember m, final int task) {
            final long t1 = System.nanoTime();
            // Exact sums take each source partition's contribution apart; else the task's records are one.
            final List<List<T>> records = m.exactSums()
                    ? TaskFrame.readEach(source, m.partitions())
                    : List.of(TaskFrame.readAll(source, m.partitions()));
            final long t2 = System.nanoTime();
            // The executor's tasks share one copy of the first state, as they share every later one (the
            // update runs once per executor): one array and one pending point per executor, not per task.
            // A Spark retry of the same stage gets its own copy (the update may change a resumed state in place).
            final String key = settings.stageKey() + "/" + TaskContext.get().stageAttemptNumber();
            final double[] s = FIRST_STATES.computeIfAbsent(key, id -> state.values());
            try {
                return iterate(m, task, s, records, t1, t2, key);
            } finally {
                FIRST_STATES.remove(key);
                body.stageEnded();
            }
        }

        private TaskOutcome iterate(
                final StageMember m,
                final int task,
                double[] s,
                final List<List<T>> records,
                final long t1,
                final long t2,
                final String key) {
            final boolean timed = options.checkpointSeconds() > 0;
            final long deadline = System.nanoTime() + (long) (options.checkpointSeconds() * 1e9);
            long lastReport = t2;
            final List<double[]> scalars = new ArrayList<>();
            int it = start;
            boolean converged = false;
            double[][] spares = new double[records.size()][];
            while (it < options.maxIterations()) {
                final double[][] vs = new double[records.size()][];
                final double[][] in = new double[records.size()][];
                for (int p = 0; p < vs.length; p++) {
                    final double[] v = body.contribution(records.get(p), s, it, spares[p]);
                    Inputs.requireVector(v, length, "the contribution of task " + task + " at iteration " + it);
                    vs[p] = v;
                    in[p] = timed ? Arrays.copyOf(v, length + 1) : v;
                }
                if (timed && task == 0 && System.nanoTime() - deadline >= 0) {
                    in[0][length] = 1; // task 0's clock decides; the sum tells everyone
                }
                final double[] current = s;
                final int iteration = it;
                final ExecutorStep step = m.step(
                        in,
                        sum -> new ExecutorStep(
                                body.update(current, timed ? Arrays.copyOf(sum, length) : sum, iteration),
                                timed && sum[length] > 0));
                s = step.step().state();
                spares = vs; // the step is over on this executor: nothing reads them any more
                if (it == start) {
                    FIRST_STATES.remove(key); // every local task has taken it; the step replaced it
                }
                if (m.reports()) {
                    final double[] sc = step.step().scalars() == null
                            ? new double[0]
                            : step.step().scalars();
                    scalars.add(sc);
                    if (progressId != 0) {
                        final long now = System.nanoTime();
                        m.tell(new Rendezvous.Progress(progressId, it, sc, now - lastReport, settings.jobId()));
                        lastReport = now;
                    }
                }
                it++;
                converged = step.step().converged();
                if (converged
                        || (options.checkpointIterations() > 0 && it - start >= options.checkpointIterations())
                        || step.checkpoint()) {
                    break;
                }
            }
            final long[] timings = m.timings(t2 - t1, System.nanoTime() - t2);
            if (!m.reports()) {
                final TaskOutcome o = new TaskOutcome(task, TaskOutcome.OK, "", null, it - start, converged, null, 0);
                o.timings = timings;
                o.inMemory = m.plan().inMemory();
                return o;
            }
            final int width = scalars.isEmpty() ? 0 : scalars.get(0).length;
            final double[] flat = new double[scalars.size() * width];
            for (int i = 0; i < scalars.size(); i++) {
                if (scalars.get(i).length != width) {
                    throw new IllegalArgumentException("step scalars changed length at iteration " + (start + i));
                }
                System.arraycopy(scalars.get(i), 0, flat, i * width, width);
            }
            final TaskOutcome o = new TaskOutcome(task, TaskOutcome.OK, "", s, it - start, converged, flat, width);
            o.timings = timings;
            o.inMemory = m.plan().inMemory();
            return o;
        }
    }
}

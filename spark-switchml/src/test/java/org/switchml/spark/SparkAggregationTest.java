package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;

/**
 * The operator and the replicated loop on local[4] with the plugin's embedded switch and strict Kryo. A
 * local master is one executor, so the switch job has one worker: the four tasks sum their folds in
 * memory and the executor streams the sum (docs/spark.md). Packets carry {@link #K} elements here so
 * that vectors span many packets.
 */
class SparkAggregationTest {
    private static final int K = 64;
    /** Task slots of local[4,4]. */
    private static final int TASKS = 4;

    private static JavaSparkContext jsc;
    /** Makes both concurrent jobs' tasks run at the same time (local mode: one JVM). */
    static volatile CyclicBarrier together;

    @BeforeAll
    static void start() {
        // local[4,4]: 4 slots, and task failures are retried like on a cluster (spark.task.maxFailures=4).
        // Through the switch, which these tests are about, though one executor could sum in memory.
        jsc = new JavaSparkContext(SparkTestSupport.conf("switchml-local", "local[4,4]", true)
                .set("spark.switchml.localShortcut", "false"));
    }

    @AfterAll
    static void stop() {
        jsc.stop();
    }

    @BeforeEach
    void smallPackets() {
        jsc.setLocalProperty("spark.switchml.k", Integer.toString(K));
    }

    @AfterEach
    void clearLocalProperties() {
        jsc.setLocalProperty("spark.switchml.precision", null);
        jsc.setLocalProperty("spark.switchml.k", null);
    }

    /**
     * The expected sum of {@code rdd} through the switch with exact sums (the default): each partition's fold a term
     * of its own, quantized with the exponents over all of them, summed as integers (B of the partitions).
     */
    private static double[] expectedFp64(final JavaRDD<double[]> rdd, final int dim) {
        return Reference.fp64(SparkTestSupport.partials(rdd, dim), K);
    }

    /** The expected sum with {@code spark.switchml.exactSums=false}: the executor's float vector, as one worker. */
    private static double[] expectedFloatPathFp64(final JavaRDD<double[]> rdd, final int dim) {
        return Reference.fp64(
                new double[][] {SparkTestSupport.oneExecutorVector(rdd, dim, Math.min(TASKS, rdd.getNumPartitions()))},
                K);
    }

    private static DriverRuntime runtime() {
        return DriverRuntimes.forContext(jsc.sc());
    }

    @Test
    void fp64SumEqualsTreeAggregateAndTheReferenceBitForBit() {
        final long seed = Seeds.seed("spark fp64 sum", 41);
        final int dim = 5_000;
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 64, dim, 4).cache();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertTrue(r.viaSwitch());
        final double[] tree = SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], SparkTestSupport::addRow);
        SparkTestSupport.assertWithinBlockRelative(tree, r.sum(), K / 2, 1e-12);
        assertArrayEquals(expectedFp64(rdd, dim), r.sum(), 0.0);
        assertEquals(List.of(0), runtime().generationsOf(r.jobId()));
        assertEquals(0, runtime().fallbackCount());
        // the float path: the executor adds its tasks' folds first
        jsc.setLocalProperty("spark.switchml.exactSums", "false");
        try {
            assertArrayEquals(
                    expectedFloatPathFp64(rdd, dim),
                    SwitchMLAggregator.aggregate(rdd, dim, new double[dim], SparkTestSupport::addRow),
                    0.0);
        } finally {
            jsc.setLocalProperty("spark.switchml.exactSums", null);
        }
    }

    @Test
    void anyNumberOfPartitionsWorksOnFourSlots() {
        final long seed = Seeds.seed("spark 200 partitions", 47);
        final int dim = 3_000;
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 600, dim, 200).cache();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertTrue(r.viaSwitch(), r.fallbackReason());
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], SparkTestSupport::addRow),
                r.sum(),
                K / 2,
                1e-12);
        assertArrayEquals(expectedFp64(rdd, dim), r.sum(), 0.0);
        // Not cached, and with a shuffle upstream: the barrier stage runs after the shuffle's map stage.
        final JavaRDD<double[]> shuffled = rdd.repartition(37);
        final SwitchMLAggregator.Result s =
                SwitchMLAggregator.aggregateWithInfo(shuffled.rdd(), dim, new double[dim], SparkTestSupport::addRow);
        assertTrue(s.viaSwitch(), s.fallbackReason());
        SparkTestSupport.assertWithinBlockRelative(
                SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], SparkTestSupport::addRow),
                s.sum(),
                K / 2,
                1e-12);
    }

    @Test
    void fp32PrecisionPerCallMatchesTheDocumentedRule() {
        final long seed = Seeds.seed("spark fp32 sum", 42);
        final int dim = 3_000;
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 40, dim, 4).cache();
        jsc.setLocalProperty("spark.switchml.precision", "fp32");
        final double[] sum = SwitchMLAggregator.aggregate(rdd, dim, new double[dim], SparkTestSupport::addRow);
        // exact sums: each partition's fold a term of its own
        final double[][] terms = SparkTestSupport.partials(rdd, dim);
        assertArrayEquals(Reference.fp32(terms, K), sum, 0.0);
        final double worst = Reference.worstBoundRatio(terms, sum, org.switchml.protocol.Encoding.FP32_BLOCK, K, false);
        assertTrue(worst <= 1.0, "fp32 error exceeds n*2^(E-B-1) by a factor " + worst);
        // About 28 bits of the block maximum for four partitions: within 1e-7 of treeAggregate.
        final double[] tree = SwitchMLAggregator.treeAggregate(rdd.rdd(), new double[dim], SparkTestSupport::addRow);
        SparkTestSupport.assertWithinBlockRelative(tree, sum, K, 1e-7);
    }

    @Test
    void aTaskFailureRetriesTheBarrierStageUnderANewGeneration() {
        final long seed = Seeds.seed("spark retry", 43);
        final int dim = 2_000;
        final JavaRDD<double[]> rdd =
                SparkTestSupport.rows(jsc, seed, 32, dim, 4).cache();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(rdd.rdd(), dim, new double[dim], (acc, row) -> {
                    final TaskContext ctx = TaskContext.get();
                    if (ctx instanceof BarrierTaskContext
                            && ctx.partitionId() == 2
                            && "0".equals(ctx.getLocalProperty(SwitchMLAggregator.ATTEMPT_PROPERTY))) {
                        throw new IllegalStateException("injected failure in the first attempt");
                    }
                    return SparkTestSupport.addRow(acc, row);
                });
        assertTrue(r.viaSwitch());
        assertArrayEquals(expectedFp64(rdd, dim), r.sum(), 0.0);
        // Task 2 failed while folding; the job may have been installed for generation 0 (in the background)
        // before the failure; the retry ran as generation 1.
        final List<Integer> gens = runtime().generationsOf(r.jobId());
        assertEquals(1, gens.get(gens.size() - 1), gens.toString());
    }

    @Test
    void aTaskKilledMidAllreduceRetriesTheStageAndResumesFromTheCheckpoint() {
        final long seed = Seeds.seed("spark loop kill", 44);
        final int dim = 20;
        final JavaRDD<double[]> data = regression(jsc, seed, 400, dim).cache();
        final ReplicatedLoop.Options opts = new ReplicatedLoop.Options(12, 5, 0);
        // Partition 1 dies at iteration 7 of stage 2 (iterations 5..9) while the others wait in the allreduce.
        final ReplicatedLoop.Result viaSwitch =
                ReplicatedLoop.run(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, 7), opts);
        final ReplicatedLoop.Result onDriver =
                ReplicatedLoop.runOnDriver(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), opts);
        assertTrue(viaSwitch.viaSwitch());
        assertEquals(12, viaSwitch.iterations());
        assertEquals(List.of(5, 10, 12), viaSwitch.checkpoints());
        assertEquals(List.of(0), runtime().generationsOf(viaSwitch.jobIds().get(0)));
        assertEquals(
                List.of(0, 1),
                runtime().generationsOf(viaSwitch.jobIds().get(1)),
                "the stage with the failure ran twice, under generations 0 and 1; the first stage did not rerun");
        assertEquals(List.of(0), runtime().generationsOf(viaSwitch.jobIds().get(2)));
        final JobCounters c = runtime().finalCounters(viaSwitch.jobIds().get(1));
        System.out.println("[retry] switch counters of the retried stage: " + c);
        assertEquals(0, c.drops(DropReason.UNKNOWN_SENDER));
        SparkTestSupport.assertWithinBlockRelative(onDriver.state(), viaSwitch.state(), dim, 1e-10);
        assertEquals(onDriver.scalars().size(), viaSwitch.scalars().size());
        for (int i = 0; i < onDriver.scalars().size(); i++) {
            assertEquals(
                    onDriver.scalars().get(i)[0],
                    viaSwitch.scalars().get(i)[0],
                    1e-10 * Math.abs(onDriver.scalars().get(i)[0]),
                    "loss of iteration " + i);
        }
        assertTrue(viaSwitch.scalars().get(11)[0] < viaSwitch.scalars().get(0)[0], "the loss decreases");
    }

    /**
     * Each stage is announced before it starts, on the thread that called the loop (so the announcement can name
     * the stage's jobs), with the state it starts from; and the result tells how each stage went.
     */
    @Test
    void everyStageIsAnnouncedOnTheCallingThreadAndReported() throws Exception {
        final long seed = Seeds.seed("spark loop stages", 46);
        final int dim = 10;
        final JavaRDD<double[]> data = regression(jsc, seed, 200, dim).cache();
        final List<Integer> starts = new ArrayList<>();
        final List<double[]> startStates = new ArrayList<>();
        final List<String> submittedBy = Collections.synchronizedList(new ArrayList<>());
        final Thread caller = Thread.currentThread();
        final ReplicatedLoop.Progress progress = new ReplicatedLoop.Progress() {
            @Override
            public void onIteration(final int iteration, final double[] scalars, final long nanos) {}

            @Override
            public void onStageStarted(final int iteration, final double[] state) {
                assertSame(caller, Thread.currentThread(), "announced on the calling thread");
                starts.add(iteration);
                startStates.add(state.clone());
                jsc.setLocalProperty("test.stage", Integer.toString(iteration));
            }
        };
        final SparkListener jobs = new SparkListener() {
            @Override
            public void onJobStart(final SparkListenerJobStart jobStart) {
                submittedBy.add(String.valueOf(jobStart.properties().getProperty("test.stage")));
            }
        };
        jsc.sc().addSparkListener(jobs);
        final ReplicatedLoop.Result r;
        try {
            r = ReplicatedLoop.run(
                    data.rdd(),
                    new double[dim],
                    dim + 2,
                    new LeastSquares(dim, 0.5, -1),
                    new ReplicatedLoop.Options(12, 5, 0),
                    progress);
        } finally {
            jsc.setLocalProperty("test.stage", null);
            jsc.sc().listenerBus().waitUntilEmpty();
            jsc.sc().removeSparkListener(jobs);
        }
        assertEquals(List.of(0, 5, 10), starts);
        assertTrue(
                submittedBy.containsAll(List.of("0", "5", "10")),
                "the stages' jobs carry what the announcement " + "set: " + submittedBy);
        assertEquals(3, r.stages().size(), r.stages().toString());
        for (int i = 0; i < 3; i++) {
            final ReplicatedLoop.Stage stage = r.stages().get(i);
            assertEquals(starts.get(i), stage.firstIteration());
            assertEquals(r.checkpoints().get(i) - stage.firstIteration(), stage.iterations());
            assertEquals(r.jobIds().get(i), stage.jobId());
            assertTrue(stage.viaSwitch() && !stage.inMemory(), stage.toString());
        }
        // the second and third stages start from the states the driver loop reaches after 5 and 10 iterations
        assertArrayEquals(new double[dim], startStates.get(0), 0.0);
        for (final int at : new int[] {5, 10}) {
            final double[] expected = ReplicatedLoop.runOnDriver(
                            data,
                            new double[dim],
                            dim + 2,
                            new LeastSquares(dim, 0.5, -1),
                            new ReplicatedLoop.Options(at, 0, 0))
                    .state();
            SparkTestSupport.assertWithinBlockRelative(expected, startStates.get(at / 5), dim, 1e-10);
        }
    }

    @Test
    void theReplicatedLoopEqualsTheDriverLoopWithTimedCheckpoints() {
        final long seed = Seeds.seed("spark loop", 45);
        final int dim = 10;
        final JavaRDD<double[]> data = regression(jsc, seed, 200, dim).cache();
        // A zero-length interval: partition 0 asks for a checkpoint after every iteration, through the sum.
        final ReplicatedLoop.Options timed = new ReplicatedLoop.Options(4, 0, 1e-9);
        final ReplicatedLoop.Result viaSwitch =
                ReplicatedLoop.run(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), timed);
        assertEquals(List.of(1, 2, 3, 4), viaSwitch.checkpoints());
        final ReplicatedLoop.Options once = new ReplicatedLoop.Options(4, 0, 0);
        final ReplicatedLoop.Result oneStage =
                ReplicatedLoop.run(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), once);
        assertEquals(List.of(4), oneStage.checkpoints());
        assertArrayEquals(oneStage.state(), viaSwitch.state(), 0.0, "checkpointing does not change the iterates");
        final ReplicatedLoop.Result onDriver =
                ReplicatedLoop.runOnDriver(data, new double[dim], dim + 2, new LeastSquares(dim, 0.5, -1), once);
        SparkTestSupport.assertWithinBlockRelative(onDriver.state(), oneStage.state(), dim, 1e-10);
    }

    @Test
    void theProgressListenerHearsEveryIterationOnceAndInOrder() {
        final long seed = Seeds.seed("spark loop progress", 48);
        final int dim = 6;
        final JavaRDD<double[]> data = regression(jsc, seed, 100, dim).cache();
        final List<Integer> heard = Collections.synchronizedList(new ArrayList<>());
        final List<double[]> losses = Collections.synchronizedList(new ArrayList<>());
        final ReplicatedLoop.Result r = ReplicatedLoop.run(
                data.rdd(),
                new double[dim],
                dim + 2,
                new LeastSquares(dim, 0.5, -1),
                new ReplicatedLoop.Options(9, 4, 0),
                (it, scalars, nanos) -> {
                    heard.add(it);
                    losses.add(scalars);
                });
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8), heard);
        for (int i = 0; i < 9; i++) {
            assertArrayEquals(r.scalars().get(i), losses.get(i), 0.0, "iteration " + i);
        }
    }

    @Test
    void twoSparkJobsShareTheSwitchConcurrently() throws Exception {
        final long seed = Seeds.seed("spark concurrent", 46);
        final int dim = 4_000;
        final JavaRDD<double[]> a = SparkTestSupport.rows(jsc, seed, 20, dim, 2).cache();
        final JavaRDD<double[]> b =
                SparkTestSupport.rows(jsc, seed + 1, 20, dim, 2).cache();
        a.count();
        b.count();
        together = new CyclicBarrier(4);
        final SwitchMLAggregator.SeqOp<double[]> meet = (acc, row) -> {
            if (acc[0] == 0 && acc[1] == 0) { // first row of the partition: wait until all 4 tasks run
                try {
                    together.await(60, TimeUnit.SECONDS);
                } catch (final Exception e) {
                    throw new IllegalStateException("the two jobs did not run concurrently", e);
                }
            }
            return SparkTestSupport.addRow(acc, row);
        };
        final CompletableFuture<SwitchMLAggregator.Result> fa = CompletableFuture.supplyAsync(
                () -> SwitchMLAggregator.aggregateWithInfo(a.rdd(), dim, new double[dim], meet));
        final CompletableFuture<SwitchMLAggregator.Result> fb = CompletableFuture.supplyAsync(
                () -> SwitchMLAggregator.aggregateWithInfo(b.rdd(), dim, new double[dim], meet));
        final SwitchMLAggregator.Result ra = fa.get(120, TimeUnit.SECONDS);
        final SwitchMLAggregator.Result rb = fb.get(120, TimeUnit.SECONDS);
        assertTrue(ra.viaSwitch() && rb.viaSwitch());
        assertFalse(ra.jobId() == rb.jobId());
        assertArrayEquals(expectedFp64(a, dim), ra.sum(), 0.0);
        assertArrayEquals(expectedFp64(b, dim), rb.sum(), 0.0);
    }

    /**
     * "At once": well within the 20 s result timeout, the bound on any wait for the switch. "No retry":
     * one Spark job (the operator runs a failed stage again as a new job), each of its stages attempted
     * once and each task once (local[4,4] retries failed tasks).
     */
    @Test
    void badInputFailsAtOnceWithTheIndexAndNoRetry() throws Exception {
        final JavaRDD<double[]> rows = SparkTestSupport.rows(jsc, 1, 10, 4, 2).cache();
        rows.count(); // computed here, so that the call below runs its own jobs only
        final List<Integer> jobs = Collections.synchronizedList(new ArrayList<>());
        final List<String> retries = Collections.synchronizedList(new ArrayList<>());
        final SparkListener attempts = new SparkListener() {
            @Override
            public void onJobStart(final SparkListenerJobStart start) {
                jobs.add(start.jobId());
            }

            @Override
            public void onTaskStart(final SparkListenerTaskStart start) {
                if (start.stageAttemptId() > 0 || start.taskInfo().attemptNumber() > 0) {
                    retries.add("stage " + start.stageId() + " attempt " + start.stageAttemptId() + ", task "
                            + start.taskInfo().index() + " attempt "
                            + start.taskInfo().attemptNumber());
                }
            }
        };
        jsc.sc().listenerBus().waitUntilEmpty();
        jsc.sc().addSparkListener(attempts);
        final long t0 = System.nanoTime();
        final Exception e;
        final double ms;
        try {
            e = assertThrows(
                    Exception.class,
                    () -> SwitchMLAggregator.aggregate(rows, 4, new double[4], (acc, row) -> {
                        acc[3] = Double.NaN;
                        return acc;
                    }));
            ms = (System.nanoTime() - t0) / 1e6;
            jsc.sc().listenerBus().waitUntilEmpty();
        } finally {
            jsc.sc().removeSparkListener(attempts);
        }
        System.out.println("[bad input] failed after " + ms + " ms, Spark jobs " + jobs + ": " + e.getMessage());
        assertTrue(String.valueOf(e.getMessage()).contains("NaN at index 3"), e.getMessage());
        assertTrue(ms < 10_000, "failed after " + ms + " ms, not at once (result timeout 20 s)");
        assertEquals(1, jobs.size(), "Spark jobs " + jobs + ": the stage ran again");
        assertEquals(List.of(), retries, "attempts after the first");
        assertThrows(
                IllegalArgumentException.class,
                () -> SwitchMLAggregator.aggregate(rows, 4, new double[3], SparkTestSupport::addRow));
        rows.unpersist(true);
    }

    /** Rows [x..., y] with y = x·w* + noise. */
    static JavaRDD<double[]> regression(final JavaSparkContext jsc, final long seed, final int rows, final int dim) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] truth = new double[dim];
        for (int i = 0; i < dim; i++) {
            truth[i] = rnd.nextDouble(-2, 2);
        }
        final List<double[]> out = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            final double[] row = new double[dim + 1];
            double y = 0;
            for (int i = 0; i < dim; i++) {
                row[i] = rnd.nextDouble(-1, 1);
                y += row[i] * truth[i];
            }
            row[dim] = y + 0.01 * rnd.nextDouble(-1, 1);
            out.add(row);
        }
        return jsc.parallelize(out, 4);
    }
}

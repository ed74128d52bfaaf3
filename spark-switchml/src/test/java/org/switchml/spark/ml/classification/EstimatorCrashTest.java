package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.spark.SwitchMLPlugin;
import org.switchml.testing.Seeds;
import org.switchml.testing.SwitchProcess;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Crashes under {@link SwitchMLLogisticRegression#fit} on local-cluster (two executor JVMs) with a standalone
 * switch process ({@code SwitchMain} with its job service): an executor JVM, then the switch, is SIGKILLed in
 * the middle of a fit that checkpoints every {@value #CHECKPOINT} evaluations, at a known evaluation (the
 * fit's listener pulls the trigger). Each fit must end with the objective of an undisturbed fit of the same
 * data and params, run first in this class: the killed stage resumes from the checkpoint before the crash,
 * through the switch after an executor's death, on the driver with treeAggregate after the switch's.
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class EstimatorCrashTest {
    private static final long RESULT_TIMEOUT_MS = 2_000;
    private static final int ROWS = 4_000;
    private static final int FEATURES = 30;
    private static final int FACTORS = 4;
    private static final int PARTITIONS = 4;
    private static final int MAX_ITER = 200;
    /**
     * Small enough that every fit ends at the minimum, where a step more or less changes the loss by far less
     * than 1e-9: trajectories may part in the last bits (a retried stage may place partitions on other executors;
     * the fallback sums without the switch's encoding).
     */
    private static final double TOL = 1e-12;
    private static final int CHECKPOINT = 15;
    /**
     * The crash comes early in the second checkpoint's stage, so that the stage still has many evaluations to
     * run when the trigger's report reaches the driver.
     */
    private static final int CRASH_AFTER_EVALUATIONS = CHECKPOINT + 2;
    private static final double RELATIVE = 1e-9;

    private static SparkSession spark;
    private static Dataset<Row> data;
    private static LogisticRegressionModel reference;
    private static FitReport referenceReport;
    /** Payload per worker of one evaluation through the switch, in MB. */
    private static volatile double megabytesPerEvaluation;
    private static SwitchProcess switchAt;
    private static Process switchProcess;
    /** The job description of every stage submitted (each attempt, each job), in order. */
    private static final List<String> STAGES = new CopyOnWriteArrayList<>();
    /** Job descriptions by stage id. */
    private static final Map<Integer, String> DESCRIPTIONS = new ConcurrentHashMap<>();
    /** The job description of each task's stage that ended with its executor's loss. */
    private static final List<String> LOST = new CopyOnWriteArrayList<>();
    /** A loop stage's span in its job description. */
    private static final Pattern SPAN = Pattern.compile("\\(evaluations (\\d+)-\\d+,");

    @BeforeAll
    static void start() throws Exception {
        final long seed = Seeds.seed("EstimatorCrashTest", 211);
        switchAt = SwitchProcess.onFreePorts(Path.of("target", "estimator-crash-switch.token"));
        switchProcess = switchAt.start("estimator-crash-switch");
        final Path target = Path.of("target").toAbsolutePath();
        spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName("switchml-estimator-crash")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.plugins", SwitchMLPlugin.class.getName())
                .config("spark.executor.memory", "512m")
                .config("spark.executor.extraClassPath", target.resolve("classes") + ":" + target.resolve("test-classes"))
                .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .config("spark.switchml.slotWaitTimeout", "180s")
                .config("spark.switchml.resultTimeout", RESULT_TIMEOUT_MS + "ms")
                .config("spark.switchml.fallback", "treeAggregate")
                .config("spark.switchml.jobService.address", switchAt.serviceAddress())
                .config("spark.switchml.auth.tokenFile", switchAt.token().toString())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onStageSubmitted(final SparkListenerStageSubmitted submitted) {
                final Properties p = submitted.properties();
                final String description = p == null ? "" : p.getProperty("spark.job.description", "");
                DESCRIPTIONS.put(submitted.stageInfo().stageId(), description);
                STAGES.add(description);
            }

            @Override
            public void onTaskEnd(final SparkListenerTaskEnd end) {
                if (end.reason() instanceof ExecutorLostFailure) {
                    LOST.add(DESCRIPTIONS.getOrDefault(end.stageId(), ""));
                }
            }
        });
        data = MllibParity.frame(spark, correlated(seed), PARTITIONS);
        data.count();
        final long t0 = System.nanoTime();
        final SwitchMLLogisticRegression lr = estimator()
                .setListener(r -> megabytesPerEvaluation = r.megabytes() / Math.max(1, r.evaluations()));
        reference = lr.fit(data);
        referenceReport = lr.lastFit();
        System.out.printf("[estimator-crash] undisturbed fit in %d ms: loss %.17g after %d iterations; %s%n",
                (System.nanoTime() - t0) / 1_000_000, finalLoss(reference), reference.summary().totalIterations(),
                referenceReport);
        assertTrue(referenceReport.viaSwitch(), "the undisturbed fit fell back: " + referenceReport);
        assertEquals(0, referenceReport.traffic().fallbacks());
        assertNotEquals("MAX_ITERATIONS", referenceReport.reason(), "the undisturbed fit stopped short of the minimum");
        // The crash must land inside a stage that has a checkpoint before it and stages after it.
        assertTrue(referenceReport.loop().evaluations() > 2 * CHECKPOINT + 1, "too short a fit for the crash: "
                + referenceReport.loop());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (spark != null) {
            spark.stop();
        }
        SwitchProcess.kill(switchProcess);
    }

    private static SwitchMLLogisticRegression estimator() {
        return (SwitchMLLogisticRegression) new SwitchMLLogisticRegression().setCheckpointInterval(CHECKPOINT)
                .setMaxIter(MAX_ITER).setTol(TOL).setRegParam(0.0);
    }

    /**
     * Binary rows whose features are a few latent factors plus a little noise: an ill-conditioned problem,
     * so that the optimizer needs many evaluations (several checkpoint stages) to reach the minimum.
     */
    private static List<Instance> correlated(final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[][] loadings = new double[FEATURES][FACTORS];
        final double[] w = new double[FEATURES];
        for (int j = 0; j < FEATURES; j++) {
            for (int k = 0; k < FACTORS; k++) {
                loadings[j][k] = rnd.nextGaussian();
            }
            w[j] = rnd.nextGaussian() * 0.5;
        }
        final List<Instance> rows = new ArrayList<>(ROWS);
        final double[] z = new double[FACTORS];
        for (int i = 0; i < ROWS; i++) {
            for (int k = 0; k < FACTORS; k++) {
                z[k] = rnd.nextGaussian();
            }
            final double[] x = new double[FEATURES];
            double margin = 0.3;
            for (int j = 0; j < FEATURES; j++) {
                x[j] = 0.5 * rnd.nextGaussian();
                for (int k = 0; k < FACTORS; k++) {
                    x[j] += loadings[j][k] * z[k];
                }
                margin += w[j] * x[j];
            }
            final double label = rnd.nextDouble() < 1 / (1 + Math.exp(-margin)) ? 1.0 : 0.0;
            rows.add(new Instance(label, 1.0, Vectors.dense(x)));
        }
        return rows;
    }

    private static double finalLoss(final LogisticRegressionModel m) {
        final double[] history = m.summary().objectiveHistory();
        return history[history.length - 1];
    }

    /**
     * Fits the data, calling {@code crash} once, on the listener's thread, at the first iteration report
     * at or past {@link #CRASH_AFTER_EVALUATIONS} evaluations, and checks that it was called before the fit's end.
     */
    private static void fitWithCrash(final SwitchMLLogisticRegression lr, final Runnable crash,
                                    final AtomicReference<LogisticRegressionModel> model) throws TimeoutException {
        final AtomicInteger crashedAt = new AtomicInteger(-1);
        final AtomicReference<Throwable> crashFailed = new AtomicReference<>();
        lr.setListener(report -> {
            if (report.totalEvaluations() >= CRASH_AFTER_EVALUATIONS && crashedAt.compareAndSet(-1, report.iteration())) {
                System.out.println("[estimator-crash] crash at iteration " + report.iteration() + " (evaluation "
                        + report.totalEvaluations() + ")");
                try {
                    crash.run();
                } catch (final Throwable e) { // the fit's listener drops what it throws: keep it for the test
                    crashFailed.set(e);
                }
            }
        });
        STAGES.clear();
        LOST.clear();
        final long t0 = System.nanoTime();
        model.set(lr.fit(data));
        spark.sparkContext().listenerBus().waitUntilEmpty(); // bounded: Spark's listener timeout
        System.out.printf("[estimator-crash] fit in %d ms: loss %.17g (undisturbed %.17g) after %d iterations; %s%n",
                (System.nanoTime() - t0) / 1_000_000, finalLoss(model.get()), finalLoss(reference),
                model.get().summary().totalIterations(), lr.lastFit());
        if (crashFailed.get() != null) {
            fail("the crash failed", crashFailed.get());
        }
        assertTrue(crashedAt.get() >= 0, "the listener never fired");
        assertTrue(model.get().summary().totalIterations() > crashedAt.get(),
                "the crash came after the fit's last iteration");
    }

    private static void assertSameObjective(final LogisticRegressionModel m) {
        final double expected = finalLoss(reference);
        final double actual = finalLoss(m);
        assertTrue(Math.abs(actual - expected) <= RELATIVE * Math.abs(expected),
                "final objective " + actual + ", undisturbed " + expected + " (relative difference "
                        + Math.abs(actual - expected) / Math.abs(expected) + ")");
    }

    /** The first evaluation of the loop stage that {@code description} names; 0 for any other stage. */
    private static int firstEvaluation(final String description) {
        final Matcher m = SPAN.matcher(description);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /** Submissions of the loop stage that starts at evaluation {@code first} (each attempt, each job). */
    private static long submissions(final int first) {
        return STAGES.stream().filter(d -> firstEvaluation(d) == first).count();
    }

    @Test
    @Order(1)
    void anExecutorKilledMidFitResumesFromTheLastCheckpointWithTheUndisturbedObjective() throws Exception {
        final AtomicReference<ProcessHandle> killed = new AtomicReference<>();
        final AtomicReference<LogisticRegressionModel> model = new AtomicReference<>();
        final SwitchMLLogisticRegression lr = estimator();
        fitWithCrash(lr, () -> {
            final ProcessHandle executor = executors().get(0);
            System.out.println("[estimator-crash] killing executor JVM pid " + executor.pid());
            executor.destroyForcibly(); // SIGKILL
            killed.set(executor);
        }, model);
        final FitReport report = lr.lastFit();
        System.out.println("[estimator-crash] stages: " + STAGES);
        killed.get().onExit().get(30, TimeUnit.SECONDS);
        assertFalse(killed.get().isAlive());
        assertSameObjective(model.get());
        assertTrue(report.viaSwitch(), "every stage went through the switch in the end: " + report);
        assertEquals(0, report.traffic().fallbacks());
        // A loop stage lost a task with the executor; it ran again from its own start (the checkpoint before the
        // crash), and every stage before it ran once.
        final int crashed = LOST.stream().mapToInt(EstimatorCrashTest::firstEvaluation).filter(f -> f > 0).min()
                .orElseThrow(() -> new AssertionError("no loop stage lost a task with the executor: " + LOST));
        System.out.println("[estimator-crash] the loop stage from evaluation " + crashed + " lost its executor");
        assertTrue(crashed > CHECKPOINT, "the crash came before the first checkpoint");
        assertTrue(submissions(crashed) >= 2, "the crashed stage did not run again: " + STAGES);
        for (int first = 1; first < crashed; first += CHECKPOINT) {
            assertEquals(1, submissions(first), "the stage from evaluation " + first + " ran again: " + STAGES);
        }
    }

    @Test
    @Order(2)
    void theSwitchKilledMidFitFallsBackToTreeAggregateWithTheUndisturbedObjective() throws Exception {
        final AtomicReference<LogisticRegressionModel> model = new AtomicReference<>();
        final SwitchMLLogisticRegression lr = estimator();
        fitWithCrash(lr, () -> {
            System.out.println("[estimator-crash] killing the switch (pid " + switchProcess.pid() + ")");
            try {
                SwitchProcess.kill(switchProcess);
            } catch (final InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, model);
        final FitReport report = lr.lastFit();
        System.out.println("[estimator-crash] stages: " + STAGES);
        assertFalse(switchProcess.isAlive());
        assertSameObjective(model.get());
        assertFalse(report.viaSwitch(), "the report hides the fallback: " + report);
        assertTrue(report.traffic().fallbacks() >= 1, "no fallback counted: " + report);
        // The statistics and the full checkpoint stages before the crash went through the switch; the crashed stage
        // and every later one ran on the driver, each counted as a fallback.
        final int switchedStages = report.loop().stages() - report.traffic().fallbacks();
        assertTrue(switchedStages >= 1, "the crash came before the first checkpoint: " + report);
        final double statistics = referenceReport.traffic().megabytes()
                - referenceReport.loop().evaluations() * megabytesPerEvaluation;
        final double switched = statistics + switchedStages * CHECKPOINT * megabytesPerEvaluation;
        assertEquals(switched, report.traffic().megabytes(), 1e-9 * switched, "MB through the switch");
        for (int first = 1; first <= switchedStages * CHECKPOINT; first += CHECKPOINT) {
            assertEquals(1, submissions(first), "the stage from evaluation " + first + " ran again: " + STAGES);
        }
    }

    /** The executor JVMs of this local-cluster: child processes of this JVM (its in-process Workers start them). */
    private static List<ProcessHandle> executors() {
        final List<ProcessHandle> out = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(h -> h.info().commandLine().map(c -> c.contains("CoarseGrainedExecutorBackend")).orElse(false))
                .toList();
        assertEquals(2, out.size(), "executor JVMs: " + out);
        return out;
    }

}

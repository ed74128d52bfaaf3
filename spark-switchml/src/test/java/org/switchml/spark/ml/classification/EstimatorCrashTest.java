package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
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
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;
import org.switchml.testing.SwitchProcess;

/**
 * Crashes under {@link SwitchMLLogisticRegression#fit} on local-cluster (two executor JVMs) with a standalone
 * switch process ({@code SwitchMain} with its job service): an executor JVM, then the switch, is SIGKILLed in
 * the middle of a fit that checkpoints every {@value CrashFits#CHECKPOINT} evaluations, at a known evaluation (the
 * fit's listener pulls the trigger). Each fit must end with the objective of an undisturbed fit of the same
 * data and params, run first in this class: the killed stage resumes from the checkpoint before the crash,
 * through the switch after an executor's death, on the driver with treeAggregate after the switch's.
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class EstimatorCrashTest {
    private static final int PARTITIONS = 4;

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

    @BeforeAll
    static void start() throws Exception {
        final long seed = Seeds.seed("EstimatorCrashTest", 211);
        switchAt = SwitchProcess.onFreePorts(Path.of("target", "estimator-crash-switch.token"));
        switchProcess = switchAt.start("estimator-crash-switch");
        spark = CrashFits.session("local-cluster[2,1,1024]", "switchml-estimator-crash", 4, CrashFits.RESULT_TIMEOUT_MS)
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
        data = MllibParity.frame(spark, CrashFits.correlated(seed, CrashFits.ROWS), PARTITIONS);
        data.count();
        final long t0 = System.nanoTime();
        final SwitchMLLogisticRegression lr = CrashFits.estimator()
                .setListener(r -> megabytesPerEvaluation = r.megabytes() / Math.max(1, r.evaluations()));
        reference = lr.fit(data);
        referenceReport = lr.lastFit();
        System.out.printf(
                "[estimator-crash] undisturbed fit in %d ms: loss %.17g after %d iterations; %s%n",
                (System.nanoTime() - t0) / 1_000_000,
                CrashFits.finalLoss(reference),
                reference.summary().totalIterations(),
                referenceReport);
        assertTrue(referenceReport.viaSwitch(), "the undisturbed fit fell back: " + referenceReport);
        assertEquals(0, referenceReport.traffic().fallbacks());
        assertNotEquals("MAX_ITERATIONS", referenceReport.reason(), "the undisturbed fit stopped short of the minimum");
        // The crash must land inside a stage that has a checkpoint before it and stages after it.
        assertTrue(
                referenceReport.loop().evaluations() > 2 * CrashFits.CHECKPOINT + 1,
                "too short a fit for the crash: " + referenceReport.loop());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (spark != null) {
            spark.stop();
        }
        SwitchProcess.kill(switchProcess);
    }

    /** Fits the data, calling {@code crash} once at {@link #CrashFits.CRASH_AFTER_EVALUATIONS} evaluations. */
    private static void fitWithCrash(
            final SwitchMLLogisticRegression lr,
            final Runnable crash,
            final AtomicReference<LogisticRegressionModel> model)
            throws TimeoutException {
        STAGES.clear();
        LOST.clear();
        model.set(CrashFits.fitWithCrash(spark, data, lr, CrashFits.CRASH_AFTER_EVALUATIONS, crash, reference));
    }

    private static void assertSameObjective(final LogisticRegressionModel m) {
        CrashFits.assertSameObjective(reference, m, CrashFits.RELATIVE);
    }

    /** Submissions of the loop stage that starts at evaluation {@code first} (each attempt, each job). */
    private static long submissions(final int first) {
        return STAGES.stream()
                .filter(d -> CrashFits.firstEvaluation(d) == first)
                .count();
    }

    @Test
    @Order(1)
    void anExecutorKilledMidFitResumesFromTheLastCheckpointWithTheUndisturbedObjective() throws Exception {
        final AtomicReference<ProcessHandle> killed = new AtomicReference<>();
        final AtomicReference<LogisticRegressionModel> model = new AtomicReference<>();
        final SwitchMLLogisticRegression lr = CrashFits.estimator();
        fitWithCrash(
                lr,
                () -> {
                    final ProcessHandle executor = CrashFits.executors(2).get(0);
                    System.out.println("[estimator-crash] killing executor JVM pid " + executor.pid());
                    executor.destroyForcibly(); // SIGKILL
                    killed.set(executor);
                },
                model);
        final FitReport report = lr.lastFit();
        System.out.println("[estimator-crash] stages: " + STAGES);
        killed.get().onExit().get(30, TimeUnit.SECONDS);
        assertFalse(killed.get().isAlive());
        assertSameObjective(model.get());
        assertTrue(report.viaSwitch(), "every stage went through the switch in the end: " + report);
        assertEquals(0, report.traffic().fallbacks());
        // A loop stage lost a task with the executor; it ran again from its own start (the checkpoint before the
        // crash), and every stage before it ran once.
        final int crashed = LOST.stream()
                .mapToInt(CrashFits::firstEvaluation)
                .filter(f -> f > 0)
                .min()
                .orElseThrow(() -> new AssertionError("no loop stage lost a task with the executor: " + LOST));
        System.out.println("[estimator-crash] the loop stage from evaluation " + crashed + " lost its executor");
        assertTrue(crashed > CrashFits.CHECKPOINT, "the crash came before the first checkpoint");
        assertTrue(submissions(crashed) >= 2, "the crashed stage did not run again: " + STAGES);
        for (int first = 1; first < crashed; first += CrashFits.CHECKPOINT) {
            assertEquals(1, submissions(first), "the stage from evaluation " + first + " ran again: " + STAGES);
        }
    }

    @Test
    @Order(2)
    void theSwitchKilledMidFitFallsBackToTreeAggregateWithTheUndisturbedObjective() throws Exception {
        final AtomicReference<LogisticRegressionModel> model = new AtomicReference<>();
        final SwitchMLLogisticRegression lr = CrashFits.estimator();
        fitWithCrash(
                lr,
                () -> {
                    System.out.println("[estimator-crash] killing the switch (pid " + switchProcess.pid() + ")");
                    try {
                        SwitchProcess.kill(switchProcess);
                    } catch (final InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                model);
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
        final double statistics =
                referenceReport.traffic().megabytes() - referenceReport.loop().evaluations() * megabytesPerEvaluation;
        final double switched = statistics + switchedStages * CrashFits.CHECKPOINT * megabytesPerEvaluation;
        assertEquals(switched, report.traffic().megabytes(), 1e-9 * switched, "MB through the switch");
        for (int first = 1; first <= switchedStages * CrashFits.CHECKPOINT; first += CrashFits.CHECKPOINT) {
            assertEquals(1, submissions(first), "the stage from evaluation " + first + " ran again: " + STAGES);
        }
    }
}

package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.ExecutorLostFailure;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
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
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.testing.Seeds;
import org.switchml.testing.SwitchProcess;

/**
 * Crashes under {@link SwitchMLLogisticRegression#fit} with no switch in the network: three executor JVMs
 * (local-cluster[3,1,...]) each host a switch shard, and a standalone switch process is an extra shard host. A fit
 * that checkpoints every {@value CrashFits#CHECKPOINT} evaluations loses, at a known evaluation, an executor JVM to SIGKILL
 * (taking its shard with it), then, in a second fit, the extra host. Each must end with the objective of an
 * undisturbed fit, run first: after the executor, the stage runs again on the new executors' shards from the
 * checkpoint before the crash, and the driver's warning names the lost executor's shard; after the extra host,
 * the stage falls back to treeAggregate (counted) and later stages run on the executors' shards alone.
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class ShardedCrashTest {
    private static final int PARTITIONS = 6;

    private static SparkSession spark;
    private static Dataset<Row> data;
    private static LogisticRegressionModel reference;
    private static SwitchProcess extraAt;
    private static Process extraProcess;
    /** The executor id of every task that ended with its executor's loss. */
    private static final List<String> LOST = new CopyOnWriteArrayList<>();
    /** Executor id by host and JVM: Spark's listener tells the id, the process list the pid. */
    private static final Map<String, String> EXECUTOR_IDS = new ConcurrentHashMap<>();

    private static final Warnings WARNINGS = new Warnings();

    /** The driver's WARN lines, for the stage retry's reason. */
    private static final class Warnings extends AbstractAppender {
        private final List<String> lines = new CopyOnWriteArrayList<>();

        Warnings() {
            super("switchml-sharded-crash", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(final LogEvent event) {
            lines.add(event.getMessage().getFormattedMessage());
        }
    }

    @BeforeAll
    static void start() throws Exception {
        final long seed = Seeds.seed("ShardedCrashTest", 223);
        extraAt = SwitchProcess.onFreePorts(Path.of("target", "sharded-crash-switch.token"));
        extraProcess = extraAt.start("sharded-crash-switch");
        // Spark notices a killed executor by itself (its barrier task fails); the result timeout only has to notice the
        // extra host's death, and a short one made seven JVMs on two loaded CPUs fall back for a stall (a flake).
        spark = CrashFits.session(
                        "local-cluster[3,1,768]", "switchml-sharded-crash", 6, 3 * CrashFits.RESULT_TIMEOUT_MS)
                // No switch address: the executors host the shards; the standalone switch is an extra shard host.
                .config("spark.switchml.shards.extraHosts", extraAt.serviceAddress())
                .config("spark.switchml.auth.tokenFile", extraAt.token().toString())
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        WARNINGS.start();
        ctx.getConfiguration().getRootLogger().addAppender(WARNINGS, Level.WARN, null);
        ctx.updateLoggers();
        spark.sparkContext().addSparkListener(new SparkListener() {
            @Override
            public void onTaskEnd(final SparkListenerTaskEnd end) {
                if (end.reason() instanceof ExecutorLostFailure lost) {
                    LOST.add(lost.execId());
                }
            }

            @Override
            public void onExecutorAdded(final SparkListenerExecutorAdded added) {
                EXECUTOR_IDS.put(added.executorId(), added.executorInfo().executorHost());
            }
        });
        data = MllibParity.frame(spark, CrashFits.correlated(seed, CrashFits.ROWS), PARTITIONS);
        data.count();
        final long t0 = System.nanoTime();
        final SwitchMLLogisticRegression lr = CrashFits.estimator();
        reference = lr.fit(data);
        final FitReport report = lr.lastFit();
        System.out.printf(
                "[sharded-crash] undisturbed fit in %d ms: loss %.17g after %d iterations; %s%n",
                (System.nanoTime() - t0) / 1_000_000,
                CrashFits.finalLoss(reference),
                reference.summary().totalIterations(),
                report);
        assertTrue(report.viaSwitch(), "the undisturbed fit fell back: " + report);
        assertTrue(
                report.loop().evaluations() > 2 * CrashFits.CHECKPOINT + 1,
                "too short a fit for the crash: " + report.loop());
    }

    @AfterAll
    static void stop() throws InterruptedException {
        final LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().getRootLogger().removeAppender(WARNINGS.getName());
        ctx.updateLoggers();
        WARNINGS.stop();
        if (spark != null) {
            spark.stop();
        }
        SwitchProcess.kill(extraProcess);
    }

    @Test
    @Order(1)
    void anExecutorKilledWithItsShardResumesFromTheCheckpointOnNewShards() throws Exception {
        final AtomicReference<ProcessHandle> killed = new AtomicReference<>();
        final SwitchMLLogisticRegression lr = CrashFits.estimator();
        WARNINGS.lines.clear();
        LOST.clear();
        final LogisticRegressionModel model = CrashFits.fitWithCrash(
                spark,
                data,
                lr,
                CrashFits.CRASH_AFTER_EVALUATIONS,
                () -> {
                    final ProcessHandle executor = CrashFits.executors(3).get(0);
                    System.out.println("[sharded-crash] killing executor JVM pid " + executor.pid());
                    executor.destroyForcibly(); // SIGKILL
                    killed.set(executor);
                },
                reference);
        final FitReport report = lr.lastFit();
        killed.get().onExit().get(30, TimeUnit.SECONDS);
        assertFalse(killed.get().isAlive());
        CrashFits.assertSameObjective(reference, model, CrashFits.RELATIVE);
        assertTrue(report.viaSwitch(), "every stage went through the shards in the end: " + report);
        assertTrue(report.traffic().fallbacks() == 0, "no fallback: the stage runs again on new shards: " + report);
        assertFalse(LOST.isEmpty(), "no task ended with its executor's loss");
        final String lostId = LOST.get(0);
        // The retry's warning names the lost executor and the shard it hosted (its host:port, as it announced it).
        final String shard = DriverRuntimes.forContext(spark.sparkContext()).shardOf(lostId);
        final String retry = WARNINGS.lines.stream()
                .filter(l -> l.contains("running it again"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no stage retry warning: " + WARNINGS.lines));
        System.out.println("[sharded-crash] " + retry);
        assertTrue(retry.contains("executor " + lostId + " ") && retry.contains("shard "), retry);
        if (shard != null) {
            assertTrue(retry.contains(shard), "the warning names shard " + shard + ": " + retry);
        }
    }

    @Test
    @Order(2)
    void theExtraShardHostKilledMidFitFallsBackThenRunsOnTheExecutorsShards() throws Exception {
        final SwitchMLLogisticRegression lr = CrashFits.estimator();
        final LogisticRegressionModel model = CrashFits.fitWithCrash(
                spark,
                data,
                lr,
                CrashFits.CRASH_AFTER_EVALUATIONS,
                () -> {
                    System.out.println("[sharded-crash] killing the extra shard host (pid " + extraProcess.pid() + ")");
                    try {
                        SwitchProcess.kill(extraProcess);
                    } catch (final InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                reference);
        final FitReport report = lr.lastFit();
        assertFalse(extraProcess.isAlive());
        CrashFits.assertSameObjective(reference, model, CrashFits.RELATIVE);
        assertTrue(report.traffic().fallbacks() >= 1, "no fallback counted: " + report);
        assertNotNull(report.loop());
        // After the crashed stage, stages ran on the executors' shards again: not every stage fell back.
        assertTrue(report.traffic().fallbacks() < report.loop().stages(), "every stage fell back: " + report);
    }
}

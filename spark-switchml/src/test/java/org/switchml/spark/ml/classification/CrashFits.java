package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.switchml.spark.SwitchMLPlugin;

/**
 * What the crash tests share: an ill-conditioned problem whose fit needs several checkpoint stages, a fit that
 * calls a crash at a known evaluation, the comparison of final objectives, and the executor JVMs of a
 * local-cluster.
 */
final class CrashFits {
    static final int FEATURES = 30;
    /** A short result timeout: a crash is noticed quickly. */
    static final long RESULT_TIMEOUT_MS = 2_000;

    static final int ROWS = 4_000;
    static final int MAX_ITER = 200;
    /**
     * Small enough that every fit ends at the minimum, where a step more or less changes the loss by far less
     * than 1e-9: trajectories may part in the last bits (a retried stage may place partitions on other executors;
     * the fallback sums without the switch's encoding).
     */
    static final double TOL = 1e-12;

    static final int CHECKPOINT = 15;
    /**
     * The crash comes early in the second checkpoint's stage, so that the stage still has many evaluations to
     * run when the trigger's report reaches the driver.
     */
    static final int CRASH_AFTER_EVALUATIONS = CHECKPOINT + 2;
    /** How close a disturbed fit's final objective must come to the undisturbed one's. */
    static final double RELATIVE = 1e-9;

    private static final int FACTORS = 4;
    /** A loop stage's span in its job description. */
    private static final Pattern SPAN = Pattern.compile("\\(evaluations (\\d+)-\\d+,");

    private CrashFits() {}

    /**
     * A session on {@code master} (a {@code local-cluster[...]}) for a crash test: loopback, the plugin, executors of
     * 512 MiB that load this build's classes, the result timeout {@code resultTimeoutMs}, and the fallback to
     * treeAggregate.
     */
    static SparkSession.Builder session(
            final String master, final String app, final int shufflePartitions, final long resultTimeoutMs) {
        final Path target = Path.of("target").toAbsolutePath();
        return SparkSession.builder()
                .master(master)
                .appName(app)
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", Integer.toString(shufflePartitions))
                .config("spark.plugins", SwitchMLPlugin.class.getName())
                .config("spark.executor.memory", "512m")
                .config(
                        "spark.executor.extraClassPath",
                        target.resolve("classes") + ":" + target.resolve("test-classes"))
                .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .config("spark.switchml.slotWaitTimeout", "180s")
                .config("spark.switchml.resultTimeout", resultTimeoutMs + "ms")
                .config("spark.switchml.fallback", "treeAggregate");
    }

    /**
     * Binary rows whose features are a few latent factors plus a little noise: an ill-conditioned problem,
     * so that the optimizer needs many evaluations (several checkpoint stages) to reach the minimum.
     */
    static List<Instance> correlated(final long seed, final int rows) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[][] loadings = new double[FEATURES][FACTORS];
        final double[] w = new double[FEATURES];
        for (int j = 0; j < FEATURES; j++) {
            for (int k = 0; k < FACTORS; k++) {
                loadings[j][k] = rnd.nextGaussian();
            }
            w[j] = rnd.nextGaussian() * 0.5;
        }
        final List<Instance> out = new ArrayList<>(rows);
        final double[] z = new double[FACTORS];
        for (int i = 0; i < rows; i++) {
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
            out.add(new Instance(label, 1.0, Vectors.dense(x)));
        }
        return out;
    }

    /** The estimator of every crash test's fits: checkpoints every {@link #CHECKPOINT} evaluations. */
    static SwitchMLLogisticRegression estimator() {
        return (SwitchMLLogisticRegression) new SwitchMLLogisticRegression()
                .setCheckpointInterval(CHECKPOINT)
                .setMaxIter(MAX_ITER)
                .setTol(TOL)
                .setRegParam(0.0);
    }

    static double finalLoss(final LogisticRegressionModel m) {
        final double[] history = m.summary().objectiveHistory();
        return history[history.length - 1];
    }

    /** The final objective of {@code m} is that of {@code reference} within {@code relative}. */
    static void assertSameObjective(
            final LogisticRegressionModel reference, final LogisticRegressionModel m, final double relative) {
        final double expected = finalLoss(reference);
        final double actual = finalLoss(m);
        assertTrue(
                Math.abs(actual - expected) <= relative * Math.abs(expected),
                "final objective " + actual + ", undisturbed " + expected + " (relative difference "
                        + Math.abs(actual - expected) / Math.abs(expected) + ")");
    }

    /** The first evaluation of the loop stage that {@code description} names; 0 for any other stage. */
    static int firstEvaluation(final String description) {
        final Matcher m = SPAN.matcher(description);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /**
     * Fits {@code data}, calling {@code crash} once, on the listener's thread, at the first iteration report at
     * or past {@code crashAfterEvaluations} evaluations, and checks that it was called before the fit's end.
     */
    static LogisticRegressionModel fitWithCrash(
            final SparkSession spark,
            final Dataset<Row> data,
            final SwitchMLLogisticRegression lr,
            final int crashAfterEvaluations,
            final Runnable crash,
            final LogisticRegressionModel reference)
            throws TimeoutException {
        final AtomicInteger crashedAt = new AtomicInteger(-1);
        final AtomicReference<Throwable> crashFailed = new AtomicReference<>();
        lr.setListener(report -> {
            if (report.totalEvaluations() >= crashAfterEvaluations && crashedAt.compareAndSet(-1, report.iteration())) {
                System.out.println("[crash] crash at iteration " + report.iteration() + " (evaluation "
                        + report.totalEvaluations() + ")");
                try {
                    crash.run();
                } catch (final Throwable e) { // the fit's listener drops what it throws: keep it for the test
                    crashFailed.set(e);
                }
            }
        });
        final long t0 = System.nanoTime();
        final LogisticRegressionModel model = lr.fit(data);
        spark.sparkContext().listenerBus().waitUntilEmpty(); // bounded: Spark's listener timeout
        System.out.printf(
                "[crash] fit in %d ms: loss %.17g (undisturbed %.17g) after %d iterations; %s%n",
                (System.nanoTime() - t0) / 1_000_000,
                finalLoss(model),
                finalLoss(reference),
                model.summary().totalIterations(),
                lr.lastFit());
        if (crashFailed.get() != null) {
            fail("the crash failed", crashFailed.get());
        }
        assertTrue(crashedAt.get() >= 0, "the listener never fired");
        assertTrue(
                model.summary().totalIterations() > crashedAt.get(), "the crash came after the fit's last iteration");
        return model;
    }

    /** The executor JVMs of this local-cluster: child processes of this JVM (its in-process Workers start them). */
    static List<ProcessHandle> executors(final int expected) {
        final List<ProcessHandle> out = ProcessHandle.current()
                .descendants()
                .filter(ProcessHandle::isAlive)
                .filter(h -> h.info()
                        .commandLine()
                        .map(c -> c.contains("CoarseGrainedExecutorBackend"))
                        .orElse(false))
                .toList();
        assertEquals(expected, out.size(), "executor JVMs: " + out);
        return out;
    }
}

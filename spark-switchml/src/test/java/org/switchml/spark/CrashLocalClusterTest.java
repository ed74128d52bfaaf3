package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.testing.Seeds;
import org.switchml.testing.SwitchProcess;

/**
 * Crashes in the middle of a replicated loop on local-cluster (two executor JVMs), with a standalone switch
 * process ({@code SwitchMain}, with its job service) named by spark.switchml.jobService.address. Every crash is SIGKILL of a real process at a known iteration (the loop's
 * progress listener pulls the trigger); every result is compared bit for bit with the loop computed in this
 * JVM (the body's arithmetic is exact in doubles and in the switch's fp64 encoding, so any lost, doubled or
 * replayed contribution would show).
 */
@EnabledIfEnvironmentVariable(named = "SPARK_HOME", matches = ".+")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CrashLocalClusterTest {
    private static final long START_MS = 120_000;
    private static final int RECORDS = 4_000;
    private static final int ITERATIONS = 500;
    private static final int CHECKPOINT = 100;
    /** The crash comes early in the second stage, so the stage is surely running. */
    private static final int CRASH_AT = 110;

    private static final long RESULT_TIMEOUT_MS = 2_000;

    private static JavaSparkContext jsc;
    private static JavaRDD<double[]> data;
    private static List<double[]> records;
    private static double[] expected;
    private static SwitchProcess switchAt;
    private static Process switchProcess;

    @BeforeAll
    static void start() throws Exception {
        final long seed = Seeds.seed("crash local-cluster", 131);
        switchAt = SwitchProcess.onFreePorts(Path.of("target", "crash-switch.token"));
        switchProcess = switchAt.start("crash-switch-1");
        final SparkConf conf = SparkTestSupport.localCluster("switchml-crash", "local-cluster[2,1,1024]")
                .set("spark.switchml.resultTimeout", RESULT_TIMEOUT_MS + "ms")
                .set("spark.switchml.jobService.address", switchAt.serviceAddress())
                .set("spark.switchml.auth.tokenFile", switchAt.token().toString());
        jsc = new JavaSparkContext(conf);
        final SplittableRandom rnd = new SplittableRandom(seed);
        records = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            records.add(new double[] {rnd.nextInt(1_000)});
        }
        data = jsc.parallelize(records, 4).cache();
        data.count();
        expected = Exact.reference(records, ITERATIONS);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (jsc != null) {
            jsc.stop();
        }
        SwitchProcess.kill(switchProcess);
    }

    private static DriverRuntime runtime() {
        return DriverRuntimes.forContext(jsc.sc());
    }

    private static ReplicatedLoop.Result run(final ReplicatedLoop.Progress progress) {
        return ReplicatedLoop.run(
                data.rdd(),
                new double[Exact.WIDTH],
                Exact.WIDTH,
                new Exact(),
                new ReplicatedLoop.Options(ITERATIONS, CHECKPOINT, 0),
                progress);
    }

    /** Calls {@code action} once, on the progress thread, when iteration {@code at} is reported. */
    private static ReplicatedLoop.Progress at(final int at, final Runnable action) {
        return (iteration, scalars, nanos) -> {
            if (iteration == at) {
                action.run();
            }
        };
    }

    @Test
    @Order(1)
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void anExecutorKilledMidLoopRetriesTheStageFromTheLastCheckpointAndTheResultIsExact() {
        final List<ProcessHandle> killed = new ArrayList<>();
        final long t0 = System.nanoTime();
        final ReplicatedLoop.Result r = run(at(CRASH_AT, () -> {
            final ProcessHandle executor = executors().get(0);
            System.out.println("[crash] killing executor JVM pid " + executor.pid() + " at iteration " + CRASH_AT);
            executor.destroyForcibly();
            killed.add(executor);
        }));
        System.out.println("[crash] executor kill: loop done in " + (System.nanoTime() - t0) / 1_000_000 + " ms, jobs "
                + r.jobIds() + ", checkpoints " + r.checkpoints());
        assertEquals(1, killed.size(), "the listener never fired");
        assertFalse(killed.get(0).isAlive());
        assertTrue(r.viaSwitch());
        assertEquals(ITERATIONS, r.iterations());
        assertArrayEquals(expected, r.state(), 0.0, "exact, as computed in this JVM");
        // The stage that lost its executor ran again under the next generation; every other stage once.
        final int crashed = r.jobIds().get(CRASH_AT / CHECKPOINT);
        final List<Integer> generations =
                runtime().generationsOf(crashed).stream().distinct().toList();
        System.out.println("[crash] generations of the crashed stage's job: " + generations);
        assertTrue(
                generations.size() >= 2 && generations.get(0) == 0, "no retry under a new generation: " + generations);
        assertEquals(List.of(100, 200, 300, 400, 500), r.checkpoints(), "resumed from the checkpoint before the crash");
    }

    @Test
    @Order(2)
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void theSwitchKilledMidLoopAndRestartedTakesTheLoopBackUnderANewRegistration() throws Exception {
        final CompletableFuture<Process> restarted = new CompletableFuture<>();
        final long fallbacks = runtime().fallbackCount();
        final long t0 = System.nanoTime();
        final ReplicatedLoop.Result r = run((iteration, scalars, nanos) -> {
            try {
                if (iteration == CRASH_AT) {
                    System.out.println(
                            "[crash] killing the switch (pid " + switchProcess.pid() + ") at iteration " + CRASH_AT);
                    SwitchProcess.kill(switchProcess);
                    CompletableFuture.runAsync(() -> {
                        try {
                            restarted.complete(switchAt.start("crash-switch-2"));
                        } catch (final Throwable e) {
                            restarted.completeExceptionally(e);
                        }
                    });
                }
                if (iteration == 2 * CHECKPOINT) {
                    // Past the crashed stage (this iteration runs in the driver's fallback): hold the loop until
                    // the switch is back, so that the stages after it meet the restarted switch.
                    switchProcess = restarted.get(START_MS, TimeUnit.MILLISECONDS);
                }
            } catch (final Exception e) {
                throw new IllegalStateException(e);
            }
        });
        final long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println(
                "[crash] switch kill + restart: loop done in " + ms + " ms, jobs " + r.jobIds() + ", checkpoints "
                        + r.checkpoints() + ", fallbacks " + (runtime().fallbackCount() - fallbacks));
        assertTrue(restarted.isDone(), "the listener never fired");
        assertEquals(ITERATIONS, r.iterations());
        assertArrayEquals(expected, r.state(), 0.0, "exact, as computed in this JVM");
        assertFalse(r.viaSwitch(), "the crashed stage's iterations ran on the driver");
        assertTrue(runtime().fallbackCount() > fallbacks);
        // The last stage went through the restarted switch: its job was registered there, as a new registration.
        final int last = r.jobIds().get(r.jobIds().size() - 1);
        assertNotEquals(List.of(), runtime().generationsOf(last), "the loop never came back to the restarted switch");
        assertTrue(r.checkpoints().contains(ITERATIONS));
    }

    @Test
    @Order(3)
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void theSwitchKilledMidLoopForGoodFallsBackToTreeAggregateAndTheResultIsExact() throws Exception {
        final long fallbacks = runtime().fallbackCount();
        final long t0 = System.nanoTime();
        final long[] killedAt = {0};
        final long[] lastReport = {0};
        final long[] longestSilence = {0};
        final ReplicatedLoop.Result r = run((iteration, scalars, nanos) -> {
            final long now = System.nanoTime();
            if (killedAt[0] != 0) {
                longestSilence[0] = Math.max(longestSilence[0], now - lastReport[0]);
            }
            lastReport[0] = now;
            if (iteration == CRASH_AT) {
                try {
                    System.out.println("[crash] killing the switch (pid " + switchProcess.pid()
                            + ") for good at iteration " + CRASH_AT);
                    SwitchProcess.kill(switchProcess);
                } catch (final InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                killedAt[0] = lastReport[0] = System.nanoTime();
            }
        });
        final long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("[crash] switch killed for good: loop done in " + ms + " ms, jobs " + r.jobIds()
                + ", checkpoints " + r.checkpoints() + ", fallbacks "
                + (runtime().fallbackCount() - fallbacks)
                + "; longest pause between two iterations after the kill " + longestSilence[0] / 1_000_000 + " ms");
        // Never stuck: the loss is noticed within the result timeout (plus Spark's scheduling and the failed
        // registrations of the next stages, generous for a busy 2-core machine).
        assertTrue(
                longestSilence[0] < TimeUnit.MILLISECONDS.toNanos(RESULT_TIMEOUT_MS + 20_000),
                "the loop stood still for " + longestSilence[0] / 1_000_000 + " ms after the switch died");
        assertFalse(switchProcess.isAlive());
        assertEquals(ITERATIONS, r.iterations());
        assertArrayEquals(expected, r.state(), 0.0, "exact, as computed in this JVM");
        assertFalse(r.viaSwitch());
        assertTrue(runtime().fallbackCount() > fallbacks);
        assertEquals(Optional.empty(), Optional.ofNullable(runtime().registrar()), "the switch is gone");
    }

    /** The executor JVMs of this local-cluster: child processes of this JVM (its in-process Workers start them). */
    private static List<ProcessHandle> executors() {
        final List<ProcessHandle> out = ProcessHandle.current()
                .descendants()
                .filter(h -> h.info()
                        .commandLine()
                        .map(c -> c.contains("CoarseGrainedExecutorBackend"))
                        .orElse(false))
                .toList();
        assertEquals(2, out.size(), "executor JVMs: " + out);
        return out;
    }

    /**
     * A loop body whose arithmetic is exact: integer records, integer state, sums far below 2^53, and the
     * state enters every contribution (a stale or doubled step would change all later ones).
     */
    static final class Exact implements ReplicatedLoop.Body<double[]> {
        private static final long serialVersionUID = 1L;
        static final int WIDTH = 2;

        @Override
        public double[] contribution(final List<double[]> recs, final double[] state, final int iteration) {
            final double[] v = new double[WIDTH];
            final long m = (long) state[0] % 13;
            for (final double[] rec : recs) {
                v[0] += rec[0] * (iteration % 7 + 1) + m;
                v[1] += 1;
            }
            return v;
        }

        @Override
        public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
            return new ReplicatedLoop.Step(
                    new double[] {(state[0] + sum[0]) % 1_000_000_007L, state[1] + sum[1]},
                    new double[] {sum[0]},
                    false);
        }

        /** The loop run here, record by record. */
        static double[] reference(final List<double[]> recs, final int iterations) {
            final Exact body = new Exact();
            double[] s = new double[WIDTH];
            for (int i = 0; i < iterations; i++) {
                s = body.update(s, body.contribution(recs, s, i), i).state();
            }
            return s;
        }
    }
}

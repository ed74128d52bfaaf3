package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchMLException;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/**
 * A worker process killed with SIGKILL in the middle of a call (real JVM, real UDP): the other workers get
 * the bounded error naming job, rank and the switch's host:port, the dead worker's slots are freed when the
 * job is registered again, and the next call, with a replacement worker, is exact.
 */
class WorkerCrashTest {
    private static final int JOB = 4711;
    private static final int K = 64;
    private static final int POOL = 16;
    /** Eight windows of the pool: a call cannot finish without the other workers' results. */
    private static final int LENGTH = 8 * K * POOL;

    private static final long RESULT_TIMEOUT_MS = 2_000;
    private static final long PROCESS_WAIT_MS = 60_000;

    @Test
    void aWorkerKilledMidCallFreesItsSlotsAndTheOthersGetTheBoundedErrorThenTheNextCallIsExact() throws Exception {
        final long seed = Seeds.seed("worker crash", 91);
        final ExecutorService callers = Executors.newFixedThreadPool(2);
        final Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx128m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        CrashWorker.class.getName())
                .redirectErrorStream(true)
                .start();
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final Thread reader = new Thread(
                () -> {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String l = r.readLine(); l != null; l = r.readLine()) {
                            lines.add(l);
                        }
                    } catch (final IOException e) {
                        lines.add("(output closed: " + e + ")");
                    }
                },
                "crash-worker-output");
        reader.setDaemon(true);
        reader.start();
        final ClientOptions opts = ClientOptions.defaults().withResultTimeoutMs(RESULT_TIMEOUT_MS);
        try (TestCluster cluster = TestCluster.start(SwitchOptions.loopback(2));
                SwitchMLClient c0 = SwitchMLClient.open(opts);
                SwitchMLClient c1 = SwitchMLClient.open(opts);
                SwitchMLClient replacement = SwitchMLClient.open(opts)) {
            final String endpoint = await(lines, "ENDPOINT ", child).substring("ENDPOINT ".length());
            final int colon = endpoint.lastIndexOf(':');
            final List<InetSocketAddress> workers = List.of(
                    c0.localAddress(),
                    c1.localAddress(),
                    new InetSocketAddress(
                            endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1))));
            final JobSpec spec = new JobSpec(JOB, 0, K, POOL, workers);
            cluster.sw.registerJob(spec);
            final JobSession s0 = c0.join(spec, 0, cluster.sw.address());
            final JobSession s1 = c1.join(spec, 1, cluster.sw.address());
            final OutputStream toChild = child.getOutputStream();
            toChild.write((spec.jobId() + " " + spec.generation() + " " + spec.secret() + " " + K + " " + POOL + " "
                            + workers.stream()
                                    .map(a -> a.getHostString() + ":" + a.getPort())
                                    .collect(Collectors.joining(","))
                            + " 2 " + cluster.sw.address() + " " + LENGTH + "\n")
                    .getBytes(StandardCharsets.UTF_8));
            toChild.flush();
            await(lines, "CALLING", child);
            // The child's first window is in the slots (first contributions, retransmissions not counted) ...
            awaitDistinctContributions(cluster, POOL);
            // ... rank 0 starts its call and fills the same slots; none completes without rank 1.
            final Future<SwitchMLException> f0 = callers.submit(() -> failure(s0));
            awaitDistinctContributions(cluster, 2 * POOL);
            child.destroyForcibly(); // SIGKILL: no goodbye, the socket just goes away
            assertTrue(child.waitFor(PROCESS_WAIT_MS, TimeUnit.MILLISECONDS), "the killed worker did not exit");
            System.out.println(
                    "[worker crash] rank 2 (pid " + child.pid() + ") killed mid-call, exit " + child.exitValue());
            // Rank 1 comes in: the first window completes, the next never does, as rank 2 is gone.
            final long t0 = System.nanoTime();
            final Future<SwitchMLException> f1 = callers.submit(() -> failure(s1));
            final List<SwitchMLException> errors = List.of(get(f0), get(f1));
            final long tookMs = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("[worker crash] both survivors failed " + tookMs + " ms after rank 1 started");
            assertTrue(
                    tookMs < RESULT_TIMEOUT_MS + 5_000, "took " + tookMs + " ms, bound " + RESULT_TIMEOUT_MS + " ms");
            for (int r = 0; r < 2; r++) {
                final SwitchMLException e = errors.get(r);
                assertInstanceOf(SwitchMLTimeoutException.class, e, "rank " + r);
                final String m = e.getMessage();
                System.out.println("[worker crash] rank " + r + ": " + m);
                assertTrue(m.contains("job " + JOB) && m.contains("rank " + r), m);
                final int port = cluster.sw.address().portForSlot(((SwitchMLTimeoutException) e).missingSlot());
                assertTrue(m.contains("127.0.0.1:" + port), "names the switch host:port of the slot: " + m);
            }

            // The controller registers the job again (next generation, new secret) with a replacement worker:
            // the dead worker's half-filled slots are dropped with the old registration, the next call is exact.
            final List<InetSocketAddress> next =
                    List.of(c0.localAddress(), c1.localAddress(), replacement.localAddress());
            final JobSpec again = new JobSpec(JOB, 1, K, POOL, next);
            assertTrue(cluster.sw.registerJob(again));
            final List<JobSession> sessions = List.of(
                    c0.join(again, 0, cluster.sw.address()),
                    c1.join(again, 1, cluster.sw.address()),
                    replacement.join(again, 2, cluster.sw.address()));
            final SplittableRandom rnd = new SplittableRandom(seed);
            final double[][] in = new double[3][];
            for (int r = 0; r < 3; r++) {
                in[r] = Vectors.toDoubles(Vectors.toFloats(Vectors.mixed(rnd, LENGTH)));
            }
            final double[] expected = Reference.fp32(in, K);
            final List<float[]> got =
                    TestCluster.parallel(3, r -> sessions.get(r).allReduce(Vectors.toFloats(in[r])));
            for (int r = 0; r < 3; r++) {
                final float[] want = Vectors.toFloats(expected);
                assertArrayEquals(want, got.get(r), "rank " + r + " after the crash");
            }
            final JobCounters counters = cluster.sw.counters(JOB);
            assertNotNull(counters);
            assertEquals(0, cluster.sw.traffic().errors());
            assertTrue(cluster.sw.removeJob(JOB));
            assertNull(cluster.sw.counters(JOB), "the job's slots are gone with it");
        } finally {
            callers.shutdownNow();
            child.destroyForcibly();
            child.waitFor(PROCESS_WAIT_MS, TimeUnit.MILLISECONDS);
        }
    }

    private static SwitchMLException failure(final JobSession s) {
        try {
            s.allReduce(new float[LENGTH]);
        } catch (final SwitchMLException e) {
            return e;
        }
        throw new AssertionError("the call finished although rank 2 died in the middle of it");
    }

    private static <T> T get(final Future<T> f) throws InterruptedException {
        try {
            return f.get(RESULT_TIMEOUT_MS + 30_000, TimeUnit.MILLISECONDS);
        } catch (final ExecutionException e) {
            throw new AssertionError(e.getCause());
        } catch (final TimeoutException e) {
            throw new AssertionError("a surviving worker's call did not end within its bound: it hangs");
        }
    }

    /** The next output line of the child starting with {@code prefix}; bounded. */
    private static String await(final BlockingQueue<String> lines, final String prefix, final Process child)
            throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROCESS_WAIT_MS);
        final List<String> seen = new ArrayList<>();
        while (System.nanoTime() - deadline < 0) {
            final String l = lines.poll(100, TimeUnit.MILLISECONDS);
            if (l != null) {
                if (l.startsWith(prefix)) {
                    return l;
                }
                seen.add(l);
            } else if (!child.isAlive() && lines.isEmpty()) {
                fail("the worker process exited (" + child.exitValue() + ") before '" + prefix + "': " + seen);
            }
        }
        fail("no '" + prefix + "' from the worker process within " + PROCESS_WAIT_MS + " ms: " + seen);
        return null;
    }

    /** Waits (bounded, polling the switch's counters) until the job holds {@code n} first contributions. */
    private static void awaitDistinctContributions(final TestCluster cluster, final long n)
            throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROCESS_WAIT_MS);
        long distinct = 0;
        while (System.nanoTime() - deadline < 0) {
            final JobCounters c = cluster.sw.counters(JOB);
            distinct = c.packetsIn() - c.retransmissions();
            if (distinct >= n) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(5); // polls a condition in another process' hands; bounded by the deadline
        }
        fail("the switch saw " + distinct + " first contributions, not " + n + ", within " + PROCESS_WAIT_MS + " ms");
    }
}

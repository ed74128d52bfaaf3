package org.switchml.control;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.switchml.client.ClientOptions;
import org.switchml.client.ClientStats;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.testing.Vectors;

/**
 * One host's workers of the BMv2 end-to-end tests, run as its own JVM inside the host's network namespace
 * ({@code ip netns exec NAME-hI java ... NamespaceWorker FILE}). FILE (properties) names the switch and one
 * or more sessions: each opens a worker socket at its endpoint, joins its job, waits for the test's go
 * file (so every worker starts together: a worker alone would only retransmit), runs the same calls as
 * {@link #calls} on {@link #input seeded inputs} and writes the results and its {@link ClientStats}.
 * Prints {@code READY} once joined and {@code DONE} at the end; exits 1 on any failure.
 */
public final class NamespaceWorker {
    private NamespaceWorker() {}

    /** One allreduce of a session: {@code fp64} double[] or float[] of {@code length} elements. */
    record Call(int length, boolean fp64) {}

    /** The calls of a session, in order: float then fp64 double for each length. */
    static List<Call> calls(final int[] lengths) {
        return calls(lengths, 1, false);
    }

    /** {@link #calls(int[])} repeated {@code reps} times; float calls only if {@code floatOnly}. */
    static List<Call> calls(final int[] lengths, final int reps, final boolean floatOnly) {
        final List<Call> out = new ArrayList<>();
        for (int rep = 0; rep < reps; rep++) {
            for (final int len : lengths) {
                out.add(new Call(len, false));
                if (!floatOnly) {
                    out.add(new Call(len, true));
                }
            }
        }
        return out;
    }

    /** Rank {@code rank}'s input of call {@code call}: doubles (fp64 calls) or their float values. */
    static double[] input(final long seed, final int rank, final int call, final Call c) {
        final SplittableRandom rnd =
                new SplittableRandom(seed ^ (0x9E3779B97F4A7C15L * (rank + 1)) ^ ((long) call << 48));
        final double[] d = Vectors.mixed(rnd, c.length());
        return c.fp64() ? d : Vectors.toDoubles(Vectors.toFloats(d));
    }

    /** Runs rank {@code rank}'s calls; each result as raw bits (float bits widened for float calls). */
    static long[][] run(final JobSession session, final long seed, final int rank, final List<Call> calls) {
        return run(session, seed, rank, calls, new long[calls.size()]);
    }

    /** {@link #run(JobSession, long, int, List)}, with each call's wall time in {@code nanos}. */
    static long[][] run(
            final JobSession session, final long seed, final int rank, final List<Call> calls, final long[] nanos) {
        final long[][] out = new long[calls.size()][];
        for (int i = 0; i < calls.size(); i++) {
            final Call c = calls.get(i);
            final double[] in = input(seed, rank, i, c);
            final long t0 = System.nanoTime();
            final long[] bits = new long[c.length()];
            if (c.fp64()) {
                final double[] r = session.allReduce(in, true);
                for (int j = 0; j < bits.length; j++) {
                    bits[j] = Double.doubleToRawLongBits(r[j]);
                }
            } else {
                final float[] r = session.allReduce(Vectors.toFloats(in));
                for (int j = 0; j < bits.length; j++) {
                    bits[j] = Float.floatToRawIntBits(r[j]);
                }
            }
            nanos[i] = System.nanoTime() - t0;
            out[i] = bits;
        }
        return out;
    }

    static void write(final Path file, final long[][] results, final ClientStats stats, final long[] nanos)
            throws IOException {
        try (OutputStream f = Files.newOutputStream(file);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(f))) {
            out.writeLong(stats.packetsSent());
            out.writeLong(stats.retransmissions());
            out.writeLong(stats.lossDetected());
            out.writeLong(stats.resultsAccepted());
            out.writeLong(stats.resultsIgnored());
            out.writeLong(stats.resultsFromUnknownSender());
            out.writeLong(stats.resultsWithBadSecret());
            out.writeLong(stats.resultsOfOtherGeneration());
            out.writeInt(nanos.length);
            for (final long t : nanos) {
                out.writeLong(t);
            }
            out.writeInt(results.length);
            for (final long[] r : results) {
                out.writeInt(r.length);
                for (final long v : r) {
                    out.writeLong(v);
                }
            }
        }
    }

    /** What {@link #write} wrote: stats, each call's wall time, each call's result bits. */
    record Output(ClientStats stats, long[] nanos, long[][] results) {}

    static Output read(final Path file) throws IOException {
        try (InputStream f = Files.newInputStream(file);
                DataInputStream in = new DataInputStream(new BufferedInputStream(f))) {
            final ClientStats stats = new ClientStats(
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong(),
                    in.readLong());
            final long[] nanos = new long[in.readInt()];
            for (int i = 0; i < nanos.length; i++) {
                nanos[i] = in.readLong();
            }
            final long[][] results = new long[in.readInt()][];
            for (int i = 0; i < results.length; i++) {
                results[i] = new long[in.readInt()];
                for (int j = 0; j < results[i].length; j++) {
                    results[i][j] = in.readLong();
                }
            }
            return new Output(stats, nanos, results);
        }
    }

    static InetSocketAddress endpoint(final String text) {
        final int c = text.lastIndexOf(':');
        return new InetSocketAddress(text.substring(0, c), Integer.parseInt(text.substring(c + 1)));
    }

    public static void main(final String[] args) throws Exception {
        final Properties p = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
            p.load(in);
        }
        final SwitchAddress sw = SwitchAddress.parse(p.getProperty("switch"));
        final Path go = Path.of(p.getProperty("go"));
        final long goWaitMs = Long.parseLong(p.getProperty("goWaitMs", "120000"));
        final int sessions = Integer.parseInt(p.getProperty("sessions"));
        final List<Thread> threads = new ArrayList<>();
        final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch joined = new CountDownLatch(sessions);
        for (int s = 0; s < sessions; s++) {
            final String pre = "s" + s + ".";
            final List<InetSocketAddress> workers = new ArrayList<>();
            for (final String w : p.getProperty(pre + "workers").split(",")) {
                workers.add(endpoint(w));
            }
            final JobSpec spec = new JobSpec(
                    Integer.parseInt(p.getProperty(pre + "jobId")),
                    Integer.parseInt(p.getProperty(pre + "generation")),
                    Integer.parseUnsignedInt(p.getProperty(pre + "secret")),
                    Integer.parseInt(p.getProperty(pre + "k")),
                    Integer.parseInt(p.getProperty(pre + "pool")),
                    workers);
            final int rank = Integer.parseInt(p.getProperty(pre + "rank"));
            final long seed = Long.parseLong(p.getProperty(pre + "seed"));
            final int[] lengths = Arrays.stream(p.getProperty(pre + "lengths").split(","))
                    .mapToInt(Integer::parseInt)
                    .toArray();
            final Path out = Path.of(p.getProperty(pre + "out"));
            final int reps = Integer.parseInt(p.getProperty(pre + "reps", "1"));
            final boolean floatOnly = Boolean.parseBoolean(p.getProperty(pre + "floatOnly", "false"));
            final InetSocketAddress me = workers.get(rank);
            final long retransmitMs = Long.parseLong(p.getProperty("retransmitMs"));
            final ClientOptions opts = new ClientOptions(
                    me.getHostString(),
                    me.getPort(),
                    false,
                    // The given timeout is also the floor: without loss the test wants every packet sent once
                    // (BMv2's queueing delay varies by tens of ms, far above the default 1 ms floor).
                    retransmitMs,
                    retransmitMs,
                    Math.max(500, 2 * retransmitMs),
                    Long.parseLong(p.getProperty("resultTimeoutMs")),
                    null);
            final Thread t = new Thread(
                    () -> {
                        try (SwitchMLClient client = SwitchMLClient.open(opts)) {
                            final JobSession session = client.join(spec, rank, sw);
                            joined.countDown();
                            awaitFile(go, goWaitMs);
                            final List<Call> calls = calls(lengths, reps, floatOnly);
                            final long[] nanos = new long[calls.size()];
                            final long[][] results = run(session, seed, rank, calls, nanos);
                            write(out, results, client.stats(), nanos);
                        } catch (final Throwable e) {
                            failures.add(e);
                            joined.countDown();
                        }
                    },
                    "session-" + s);
            threads.add(t);
            t.start();
        }
        if (!joined.await(goWaitMs, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("sessions did not open within " + goWaitMs + " ms");
        }
        System.out.println("READY");
        System.out.flush();
        for (final Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            for (final Throwable e : failures) {
                e.printStackTrace(System.out);
            }
            System.out.println("FAILED " + failures.get(0));
            System.out.flush();
            System.exit(1);
        }
        System.out.println("DONE");
        System.out.flush();
        System.exit(0);
    }

    private static void awaitFile(final Path file, final long timeoutMs) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no go file " + file + " within " + timeoutMs + " ms");
            }
            // Bounded polling of a file the test creates once every worker is ready.
            Thread.sleep(5);
        }
    }
}

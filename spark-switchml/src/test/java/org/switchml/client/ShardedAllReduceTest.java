package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.ShardedJob;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;
import org.switchml.transport.FaultPlan;

/**
 * A job split among several switches (shards) returns, on every worker, bit for bit what one switch returns for
 * the same inputs, k and n, whatever the shards' number and weights; each shard carries its share of the packets;
 * a shard that dies ends every worker's call within the bound, naming that shard.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ShardedAllReduceTest {
    private static final int K = 64;
    private static final AtomicInteger JOB_IDS = new AtomicInteger(500);
    /** The hub: one switch for the whole vector. */
    private static SoftwareSwitch hub;
    /** Up to five shards, two of them with two lanes. */
    private static final List<SoftwareSwitch> shards = new ArrayList<>();

    @BeforeAll
    static void start() {
        hub = SoftwareSwitch.start(SwitchOptions.loopback(2));
        for (int i = 0; i < 5; i++) {
            shards.add(SoftwareSwitch.start(SwitchOptions.loopback(i % 3 == 0 ? 2 : 1)));
        }
    }

    @AfterAll
    static void stop() {
        hub.close();
        shards.forEach(SoftwareSwitch::close);
    }

    /** n workers, their sockets, the hub's session and the sharded session of each. */
    private record Workers(
            List<SwitchMLClient> clients, List<JobSession> hub, List<ShardedSession> sharded, ShardedJob job)
            implements AutoCloseable {
        @Override
        public void close() {
            clients.forEach(SwitchMLClient::close);
        }
    }

    /**
     * Opens n workers, registers one job on the hub and one sharded job on the first {@code weights.length}
     * shards (each with its own secret and pool, as separate registrations have), and joins both.
     */
    private static Workers workers(final int n, final int[] weights, final ClientOptions options) {
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            final SwitchMLClient c = SwitchMLClient.open(options.withFaults(
                    options.faults().withSeed(options.faults().seed() + 7919L * r)));
            clients.add(c);
            endpoints.add(c.localAddress());
        }
        final int jobId = JOB_IDS.incrementAndGet();
        final JobSpec hubSpec = new JobSpec(jobId, 0, K, 32, endpoints);
        hub.registerJob(hubSpec);
        final List<ShardedJob.Part> parts = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            // The same job id on every shard (each is a switch of its own), a secret and a pool of each one's own.
            final JobSpec spec = new JobSpec(jobId, 0, K, 8 + 4 * i, endpoints);
            shards.get(i).registerJob(spec);
            parts.add(new ShardedJob.Part(shards.get(i).address(), spec, weights[i]));
        }
        final ShardedJob job = new ShardedJob(parts);
        final List<JobSession> hubSessions = new ArrayList<>();
        final List<ShardedSession> sharded = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            hubSessions.add(clients.get(r).join(hubSpec, r, hub.address()));
            sharded.add(clients.get(r).join(job, r, options.resultTimeoutMs()));
        }
        return new Workers(clients, hubSessions, sharded, job);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(2, new int[] {1, 1}, 10_000),
                Arguments.of(3, new int[] {1, 1, 1}, 0),
                Arguments.of(3, new int[] {1, 1, 1}, 1),
                Arguments.of(3, new int[] {1, 1, 1}, 2 * K + 1),
                Arguments.of(4, new int[] {3, 0, 1, 2}, 50_003),
                Arguments.of(4, new int[] {2, 2, 1, 1, 0}, 200_000),
                Arguments.of(8, new int[] {1, 1, 1, 1, 1}, 30_000),
                Arguments.of(5, new int[] {1}, 12_345));
    }

    @ParameterizedTest(name = "n={0} weights={1} length={2}")
    @MethodSource("cases")
    void shardedSumsEqualTheHubsBitForBit(final int n, final int[] weights, final int length) {
        final SplittableRandom rnd = new SplittableRandom(
                Seeds.seed("sharded n=" + n + " len=" + length, 31L * n + length + weights.length));
        final float[][] fin = new float[n][];
        final double[][] din = new double[n][];
        final int[][] iin = new int[n][];
        for (int r = 0; r < n; r++) {
            fin[r] = Vectors.toFloats(Vectors.mixed(rnd, length));
            din[r] = Vectors.mixed(rnd, length);
            iin[r] = rnd.ints(length).toArray();
        }
        try (Workers w = workers(n, weights, ClientOptions.defaults())) {
            final List<float[]> hubF =
                    TestCluster.parallel(n, r -> w.hub().get(r).allReduce(fin[r]));
            final List<float[]> shF =
                    TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(fin[r]));
            final List<double[]> hub64 =
                    TestCluster.parallel(n, r -> w.hub().get(r).allReduce(din[r], true));
            final List<double[]> sh64 =
                    TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(din[r], true));
            final List<double[]> hub32 =
                    TestCluster.parallel(n, r -> w.hub().get(r).allReduce(din[r], false));
            final List<double[]> sh32 =
                    TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(din[r], false));
            final List<int[]> hubI = TestCluster.parallel(n, r -> w.hub().get(r).allReduce(iin[r]));
            final List<int[]> shI =
                    TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(iin[r]));
            final double[][] fd = new double[n][];
            for (int r = 0; r < n; r++) {
                fd[r] = Vectors.toDoubles(fin[r]);
            }
            // The documented rule too, so that the hub and the shards cannot agree on a wrong sum.
            final float[] expectedF = Vectors.toFloats(Reference.fp32(fd, K));
            final double[] expected64 = Reference.fp64(din, K);
            for (int r = 0; r < n; r++) {
                assertArrayEquals(hubF.get(0), shF.get(r), "fp32 floats, rank " + r);
                assertArrayEquals(expectedF, shF.get(r), "fp32 floats against the reference, rank " + r);
                assertArrayEquals(hub64.get(0), sh64.get(r), 0.0, "fp64, rank " + r);
                assertArrayEquals(expected64, sh64.get(r), 0.0, "fp64 against the reference, rank " + r);
                assertArrayEquals(hub32.get(0), sh32.get(r), 0.0, "doubles in fp32, rank " + r);
                assertArrayEquals(hubI.get(0), shI.get(r), "ints, rank " + r);
            }
        }
    }

    @Test
    void eachShardCarriesItsShareOfThePackets() {
        final int n = 3;
        final int[] weights = {1, 2, 0, 1};
        final int length = 400 * K;
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("shares", 11));
        final float[][] in = new float[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.toFloats(Vectors.mixed(rnd, length));
        }
        try (Workers w = workers(n, weights, ClientOptions.defaults())) {
            TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(in[r]));
            final int[] starts = w.job().blockStarts(400);
            final int jobId = w.job().parts().get(0).spec().jobId();
            for (int i = 0; i < weights.length; i++) {
                final int blocks = starts[i + 1] - starts[i];
                final JobCounters c = shards.get(i).counters(jobId);
                // Every worker sends each block of the run once, plus the pool's look-ahead packets (FP32); the
                // switch counts retransmissions among the packets in as well.
                final long expected = blocks == 0
                        ? 0
                        : (long) n
                                * (blocks
                                        + Math.min(w.job().parts().get(i).spec().poolSize(), blocks));
                assertEquals(
                        expected,
                        c.packetsIn() - c.retransmissions(),
                        "shard " + i + " (weight " + weights[i] + ", " + blocks + " blocks, " + c + ")");
            }
            assertEquals(100, starts[1] - starts[0]);
            assertEquals(200, starts[2] - starts[1]);
            assertEquals(0, starts[3] - starts[2]);
            assertEquals(100, starts[4] - starts[3]);
        }
    }

    @Test
    void exactUnderLossDuplicationAndReordering() {
        final int n = 4;
        final FaultPlan faults = new FaultPlan(0.02, 0.01, 0.02, 0, Seeds.seed("sharded faults", 3));
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("sharded faults data", 4));
        final double[][] in = new double[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, 200_000);
        }
        try (Workers w =
                workers(n, new int[] {1, 1, 1, 1}, ClientOptions.defaults().withFaults(faults))) {
            for (int call = 0; call < 3; call++) {
                final List<double[]> out =
                        TestCluster.parallel(n, r -> w.sharded().get(r).allReduce(in[r], true));
                final double[] expected = Reference.fp64(in, K);
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(expected, out.get(r), 0.0, "call " + call + " rank " + r);
                }
            }
        }
    }

    @Test
    void aDeadShardEndsEveryCallWithinTheBoundNamingIt() {
        final int n = 3;
        final long timeoutMs = 1_500;
        final SoftwareSwitch doomed = SoftwareSwitch.start(SwitchOptions.loopback(1));
        final List<SwitchMLClient> clients = new ArrayList<>();
        try {
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                clients.add(SwitchMLClient.open(ClientOptions.defaults().withResultTimeoutMs(timeoutMs)));
                endpoints.add(clients.get(r).localAddress());
            }
            final JobSpec a = new JobSpec(9_001, 0, K, 16, endpoints);
            final JobSpec b = new JobSpec(9_001, 0, K, 16, endpoints);
            shards.get(1).registerJob(a);
            doomed.registerJob(b);
            assertNotEquals(a.secret(), b.secret(), "each registration draws its own secret");
            final ShardedJob job = new ShardedJob(List.of(
                    new ShardedJob.Part(shards.get(1).address(), a, 1), new ShardedJob.Part(doomed.address(), b, 1)));
            final List<ShardedSession> s = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                s.add(clients.get(r).join(job, r, timeoutMs));
            }
            final float[] v = new float[200 * K];
            java.util.Arrays.fill(v, 1f);
            final List<float[]> first = TestCluster.parallel(n, r -> s.get(r).allReduce(v));
            assertEquals(3f, first.get(0)[v.length - 1]);
            doomed.close();
            final long t0 = System.nanoTime();
            final List<Throwable> errors = TestCluster.parallel(n, r -> {
                try {
                    s.get(r).allReduce(v);
                    return null;
                } catch (final RuntimeException e) {
                    return e;
                }
            });
            final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            final String dead =
                    doomed.address().host() + ":" + doomed.address().lanePorts().get(0);
            for (int r = 0; r < n; r++) {
                final Throwable e = errors.get(r);
                assertTrue(e instanceof SwitchMLTimeoutException, "rank " + r + ": " + e);
                assertTrue(
                        e.getMessage().contains(dead),
                        "rank " + r + " must name the dead shard " + dead + ": " + e.getMessage());
                assertTrue(e.getMessage().contains("rank " + r), e.getMessage());
            }
            assertTrue(tookMs < timeoutMs + 3_000, "calls ended after " + tookMs + " ms");
            for (int r = 0; r < n; r++) {
                final int rank = r;
                assertThrows(RuntimeException.class, () -> s.get(rank).allReduce(v), "a failed session is broken");
            }
        } finally {
            clients.forEach(SwitchMLClient::close);
            doomed.close();
        }
    }
}

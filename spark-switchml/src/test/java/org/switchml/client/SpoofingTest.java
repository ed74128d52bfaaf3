package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.control.ControllerOptions;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.SwitchTraffic;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.Wire;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.UdpPeer;

/**
 * Spoofing: datagrams whose source is a registered worker's own endpoint, but without the
 * job's secret, are dropped as BAD_SECRET, touch no slot, provoke no reply, and the job stays exact.
 *
 * <p>A forged source address needs raw sockets; the same effect on loopback, without privileges, is to send
 * the forged datagram through the worker's own socket (this test lives in the client's package for that):
 * the switch sees exactly the registered source IPv4 address and port. The job is installed by the
 * P4Runtime controller, which draws its secret; the forger never learns it.
 */
class SpoofingTest {
    private static final int K = 64;
    private static final int POOL = 4;
    private static final long WAIT_MS = 10_000;

    private static SoftwareSwitch sw;
    private static SwitchRuntimeServer server;
    private static SwitchController controller;

    @BeforeAll
    static void start() {
        // One lane: a fence round trip proves everything sent before it was handled.
        sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
        server = SwitchRuntimeServer.start(sw, 0);
        controller = SwitchController.connect(ControllerOptions.of("127.0.0.1", server.port()));
        controller.setPipeline(PipelineConfig.softwareSwitch());
    }

    @AfterAll
    static void stop() {
        controller.close();
        server.close();
        sw.close();
    }

    /** Sends {@code datagram} through {@code worker}'s own socket and waits until the kernel has it. */
    private static void forge(final SwitchMLClient worker, final byte[] datagram, final InetSocketAddress to)
            throws Exception {
        worker.loop()
                .submit(() -> {
                    final ByteBuf b = worker.allocate(datagram.length);
                    b.writeBytes(datagram);
                    worker.handler().sender.send(b, to);
                    worker.handler().sender.flush();
                })
                .get(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** A contribution of packet g exactly as rank's worker would send it, except for the secret. */
    private static byte[] contribution(
            final JobSpec spec, final int rank, final long g, final int secret, final int generation, final int fill) {
        final int[] payload = new int[K];
        Arrays.fill(payload, fill);
        return UdpPeer.datagram(
                Kind.CONTRIBUTION.code(),
                Wire.setOf(g, POOL),
                K,
                spec.jobId(),
                generation,
                rank,
                Wire.slotOf(g, POOL),
                Wire.EXPONENT_NONE,
                (int) g,
                secret,
                payload);
    }

    @Test
    void forgedDatagramsFromTheWorkersOwnEndpointsAreDroppedAndTheJobStaysExact() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("spoofing", 91));
        // No retransmission on a quiet loopback (long timeouts), so every count below is exact.
        final ClientOptions options = ClientOptions.defaults().withRetransmitTimeoutsMs(10_000, 10_000, 10_000);
        try (SwitchMLClient w0 = SwitchMLClient.open(options);
                SwitchMLClient w1 = SwitchMLClient.open(options);
                UdpPeer fence = new UdpPeer();
                UdpPeer stranger = new UdpPeer()) {
            final SwitchMLClient[] w = {w0, w1};
            final JobSpec spec = controller
                    .registerJob(new JobSpec(4242, 2, K, POOL, List.of(w0.localAddress(), w1.localAddress())))
                    .spec();
            final JobSpec fenceJob = controller
                    .registerJob(new JobSpec(4243, 0, 1, 1, List.of(fence.address())))
                    .spec();
            final InetSocketAddress lane = sw.address().laneAddresses().get(0);
            final List<JobSession> s = List.of(w0.join(spec, 0, sw.address()), w1.join(spec, 1, sw.address()));

            // Call 1: INT32, 2 packets per worker (g = 0, 1), both complete: their sets hold stored results.
            final int[][] a = {
                rnd.ints(2 * K - 5).toArray(), rnd.ints(2 * K - 5).toArray()
            };
            final List<int[]> one = TestCluster.parallel(2, r -> s.get(r).allReduce(a[r]));
            assertArrayEquals(sum(a), one.get(0));
            assertArrayEquals(sum(a), one.get(1));

            final JobCounters jobBefore = sw.counters(spec.jobId());
            final SwitchTraffic before = sw.traffic();
            final long ignored0 = w0.stats().resultsIgnored();
            final long ignored1 = w1.stats().resultsIgnored();
            final int secret = spec.secret();
            final int[] wrong = {secret ^ 1, secret ^ 0x8000_0000, ~secret, 0, fenceJob.secret(), rnd.nextInt()};
            int forged = 0;
            for (int r = 0; r < 2; r++) {
                for (final int bad : wrong) {
                    if (bad == secret) {
                        continue;
                    }
                    // Retransmissions of call 1's completed packets: accepted, they would be answered.
                    forge(w[r], contribution(spec, r, 0, bad, spec.generation(), 1), lane);
                    forge(w[r], contribution(spec, r, 1, bad, spec.generation(), 1), lane);
                    // The next uses of the slots (call 2's g = 2, 3, and the other set of slot 0): accepted,
                    // they would start those uses with poison.
                    forge(w[r], contribution(spec, r, 2, bad, spec.generation(), 1_000_000), lane);
                    forge(w[r], contribution(spec, r, 3, bad, spec.generation(), 1_000_000), lane);
                    forge(w[r], contribution(spec, r, 4, bad, spec.generation(), 1_000_000), lane);
                    // Wrong generation and wrong rank as well: still BAD_SECRET, the secret is checked first.
                    forge(w[r], contribution(spec, r, 2, bad, spec.generation() + 1, 7), lane);
                    forge(w[r], contribution(spec, 1 - r, 2, bad, spec.generation(), 7), lane);
                    forged += 7;
                }
            }
            // And from a host that is not a worker at all.
            stranger.send(contribution(spec, 0, 2, secret + 12345, spec.generation(), 3), lane);
            forged++;
            fence.send(UdpPeer.contribution(fenceJob.jobId(), 0, fenceJob.secret(), 0, 0, 1, new int[] {1}), lane);
            assertNotNull(fence.receive(WAIT_MS), "fence result");

            final JobCounters job = sw.counters(spec.jobId());
            final SwitchTraffic after = sw.traffic();
            System.out.println("[spoofing] " + forged + " forged datagrams; job " + job);
            assertEquals(forged, job.drops(DropReason.BAD_SECRET) - jobBefore.drops(DropReason.BAD_SECRET));
            assertEquals(jobBefore.packetsIn(), job.packetsIn(), "no forged datagram passed the secret check");
            assertEquals(jobBefore.packetsOut(), job.packetsOut(), "nothing was sent in reply");
            assertEquals(jobBefore.retransmissions(), job.retransmissions());
            for (final DropReason r : DropReason.values()) {
                if (r != DropReason.BAD_SECRET) {
                    assertEquals(jobBefore.drops(r), job.drops(r), r + " of the job moved");
                }
            }
            assertEquals(forged + 1, after.received() - before.received());
            assertTrue(after.balanced(), after.toString());
            assertEquals(ignored0, w0.stats().resultsIgnored(), "rank 0 received nothing");
            assertEquals(ignored1, w1.stats().resultsIgnored(), "rank 1 received nothing");

            // Call 2 starts exactly where the forged packets pointed: exact.
            final int[][] b = {rnd.ints(3 * K).toArray(), rnd.ints(3 * K).toArray()};
            final List<int[]> two = TestCluster.parallel(2, r -> s.get(r).allReduce(b[r]));
            assertArrayEquals(sum(b), two.get(0));
            assertArrayEquals(sum(b), two.get(1));

            // Call 3 with a forger injecting into both workers' sockets for its whole duration.
            final double[][] c = {
                rnd.doubles(40 * K, -1e6, 1e6).toArray(),
                rnd.doubles(40 * K, -1e6, 1e6).toArray()
            };
            final AtomicBoolean running = new AtomicBoolean(true);
            final AtomicLong injected = new AtomicLong();
            final long forgerSeed = rnd.nextLong();
            final CompletableFuture<Void> forger = CompletableFuture.runAsync(() -> {
                final SplittableRandom f = new SplittableRandom(forgerSeed);
                try {
                    while (running.get()) {
                        final int r = f.nextInt(2);
                        int bad = f.nextInt();
                        if (bad == secret) {
                            bad = ~secret;
                        }
                        forge(
                                w[r],
                                contribution(spec, r, 5 + f.nextInt(200), bad, spec.generation(), f.nextInt()),
                                lane);
                        injected.incrementAndGet();
                    }
                } catch (final Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            final List<double[]> three;
            try {
                three = TestCluster.parallel(2, r -> s.get(r).allReduce(c[r]));
            } finally {
                running.set(false);
                waitFor(forger);
            }
            final double[] expected = org.switchml.testing.Reference.fp32(c, K);
            assertArrayEquals(expected, three.get(0), 0.0);
            assertArrayEquals(expected, three.get(1), 0.0);
            System.out.println("[spoofing] " + injected.get() + " forged datagrams during call 3; job "
                    + sw.counters(spec.jobId()));
            assertTrue(injected.get() > 0);
            controller.removeJob(spec.jobId());
            controller.removeJob(fenceJob.jobId());
        }
    }

    private static void waitFor(final CompletableFuture<Void> f) throws Exception {
        try {
            f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (final ExecutionException | TimeoutException e) {
            throw new AssertionError("forger failed", e);
        }
    }

    private static int[] sum(final int[][] in) {
        final int[] out = new int[in[0].length];
        for (final int[] v : in) {
            for (int i = 0; i < out.length; i++) {
                out[i] += v[i];
            }
        }
        return out;
    }
}

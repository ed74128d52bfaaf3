package org.switchml.dataplane;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.Kind;
import org.switchml.protocol.Wire;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/** Jobs on one switch stay isolated, and bad datagrams are dropped and counted, never aggregated. */
class SwitchIsolationTest {
    private static final int K = 64;
    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(SwitchOptions.loopback(2));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void twoConcurrentJobsAreBothExact() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("two jobs", 42));
        final int n1 = 3;
        final int n2 = 5;
        final double[][] a = new double[n1][];
        final double[][] b = new double[n2][];
        for (int r = 0; r < n1; r++) {
            a[r] = Vectors.mixed(rnd, 100_000);
        }
        for (int r = 0; r < n2; r++) {
            b[r] = Vectors.mixed(rnd, 70_001);
        }
        try (TestCluster.Job j1 = cluster.job(1, 0, n1, K, 64, ClientOptions.defaults());
                TestCluster.Job j2 =
                        cluster.job(2, 0, n2, K, 32, ClientOptions.defaults().withFp64(true))) {
            final CompletableFuture<List<double[]>> f1 = CompletableFuture.supplyAsync(
                    () -> TestCluster.parallel(n1, r -> j1.session(r).allReduce(a[r])));
            final CompletableFuture<List<double[]>> f2 = CompletableFuture.supplyAsync(
                    () -> TestCluster.parallel(n2, r -> j2.session(r).allReduce(b[r])));
            final double[] e1 = Reference.fp32(a, K);
            final double[] e2 = Reference.fp64(b, K);
            for (final double[] got : f1.join()) {
                assertArrayEquals(e1, got, 0.0);
            }
            for (final double[] got : f2.join()) {
                assertArrayEquals(e2, got, 0.0);
            }
        }
    }

    @Test
    void badDatagramsAreDroppedAndCountedWithoutCorruptingAJob() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("bad datagrams", 43));
        final int n = 2;
        final double[][] in = {Vectors.mixed(rnd, 10_000), Vectors.mixed(rnd, 10_000)};
        try (TestCluster.Job job = cluster.job(9, 4, n, K, 16, ClientOptions.defaults());
                DatagramSocket intruder = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            final SwitchTraffic before = cluster.sw.traffic();
            final InetSocketAddress lane0 = cluster.sw.address().laneAddresses().get(0);
            final InetSocketAddress lane1 = cluster.sw.address().laneAddresses().get(1);
            final int secret = job.spec().secret();
            // Short, wrong version, wrong length.
            send(intruder, new byte[7], lane0);
            final byte[] badVersion = contribution(9, 4, secret, 0, 0, 0, K);
            badVersion[0] = 0x21;
            send(intruder, badVersion, lane0);
            final byte[] badLength = contribution(9, 4, secret, 0, 0, 0, K);
            send(intruder, Arrays.copyOf(badLength, badLength.length - 4), lane0);
            // Unknown job; valid job without its secret; unregistered sender (claims rank 0), wrong generation.
            send(intruder, contribution(12345, 0, secret, 0, 0, 0, K), lane0);
            send(intruder, contribution(9, 4, secret + 1, 0, 0, 0, K), lane0);
            send(intruder, contribution(9, 4, secret, 0, 0, 0, K), lane0);
            send(intruder, contribution(9, 3, secret, 0, 0, 0, K), lane0);
            // A second stranger claiming rank 1 on the other lane.
            try (DatagramSocket stranger = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
                send(stranger, contribution(9, 4, secret, 1, 1, 0, K), lane1);
            }

            final List<double[]> results =
                    TestCluster.parallel(n, r -> job.session(r).allReduce(in[r]));
            final double[] expected = Reference.fp32(in, K);
            for (final double[] got : results) {
                assertArrayEquals(expected, got, 0.0);
            }
            final SwitchTraffic after = cluster.sw.traffic();
            final JobCounters c = cluster.sw.counters(9);
            System.out.println("[bad] switch " + after + " job " + c);
            assertEquals(3, after.drops(DropReason.MALFORMED) - before.drops(DropReason.MALFORMED));
            assertEquals(1, after.drops(DropReason.UNKNOWN_JOB) - before.drops(DropReason.UNKNOWN_JOB));
            assertEquals(2, c.drops(DropReason.UNKNOWN_SENDER));
            assertEquals(1, c.drops(DropReason.STALE_GENERATION));
            assertEquals(1, c.drops(DropReason.BAD_SECRET));
            assertEquals(0, after.errors());
            assertTrue(after.balanced(), after.toString());
        }
    }

    @Test
    void wrongKAndBadSlotFromARegisteredWorkerAreCounted() throws Exception {
        try (DatagramSocket w0 = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            final InetSocketAddress me = (InetSocketAddress) w0.getLocalSocketAddress();
            final int secret = 31_000_031;
            cluster.sw.registerJob(new org.switchml.protocol.JobSpec(31, 0, secret, K, 8, List.of(me)));
            final InetSocketAddress lane0 = cluster.sw.address().laneAddresses().get(0);
            send(w0, contribution(31, 0, secret, 0, 0, 0, K / 2), lane0); // wrong k
            send(w0, contribution(31, 0, secret, 0, 8, 0, K), lane0); // slot outside the pool of 8
            send(w0, contribution(31, 0, secret, 0, 1, 0, K), lane0); // slot 1 belongs to lane 1
            // A valid one, so the counters are read after all four were handled (same lane, in order).
            send(w0, contribution(31, 0, secret, 0, 0, 0, K), lane0);
            w0.setSoTimeout(5_000);
            final DatagramPacket reply = new DatagramPacket(new byte[2048], 2048);
            w0.receive(reply);
            final ByteBuf r = Unpooled.wrappedBuffer(reply.getData(), 0, reply.getLength());
            assertEquals(Kind.RESULT.code(), Wire.kindCode(r, 0));
            final JobCounters c = cluster.sw.counters(31);
            assertEquals(1, c.drops(DropReason.WRONG_K));
            assertEquals(2, c.drops(DropReason.BAD_SLOT));
            assertEquals(1, c.packetsIn());
            assertEquals(1, c.packetsOut());
            assertTrue(cluster.sw.removeJob(31));
        }
    }

    private static void send(final DatagramSocket s, final byte[] bytes, final InetSocketAddress to) throws Exception {
        s.send(new DatagramPacket(bytes, bytes.length, to));
    }

    /** A well-formed contribution with payload 1, 2, 3, ... */
    static byte[] contribution(
            final int job,
            final int gen,
            final int secret,
            final int rank,
            final int slot,
            final int seq,
            final int k) {
        final ByteBuf b = Unpooled.buffer(Wire.datagramLength(k));
        Wire.writeHeader(
                b, 0, Kind.CONTRIBUTION, 0, Encoding.INT32, k, job, gen, rank, slot, Wire.EXPONENT_NONE, seq, secret);
        for (int i = 0; i < k; i++) {
            b.setInt(Wire.PAYLOAD_OFFSET + 4 * i, i + 1);
        }
        final byte[] out = new byte[Wire.datagramLength(k)];
        b.getBytes(0, out);
        return out;
    }
}

package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.Unpooled;
import io.netty.channel.socket.DatagramPacket;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.VectorCodec;
import org.switchml.protocol.Wire;
import org.switchml.testing.ExactSum;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.UdpPeer;
import org.switchml.testing.Vectors;

/**
 * A worker completes a packet only with a result from the switch's address and the port of the lane its
 * slot belongs to (docs/protocol.md, section 3, receive rule). Forged results that carry everything a
 * worker checks besides the sender (the job's id, secret and generation, the outstanding packet's slot, set and
 * sequence number), with other values, are dropped and counted, and every worker's sum stays bit-exact. The
 * positive controls show the same forgeries accepted when they come from the switch's lane port, and the same
 * checks accepting a result that is right in every respect: what is dropped here is dropped for its sender.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ResultSenderTest {
    private static final int K = 64;
    private static final int POOL = 16;
    private static final int LANES = 2;
    private static final int ROUNDS = 20;
    private static final long WAIT_MS = 20_000;
    /** Bound on the forgeries sent while the whole job runs. */
    private static final int MAX_FORGED_WHILE_RUNNING = 10_000;
    /** Loopback addresses other than the switch's (Linux routes all of 127/8 to lo). */
    private static final String OTHER_HOST = "127.0.0.2";

    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(SwitchOptions.loopback(LANES));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /** Where the forger sends from. */
    enum Forger {
        /** The switch's IPv4 address, another port. */
        OTHER_PORT,
        /** Another IPv4 address, the port of the lane the forged slot belongs to. */
        OTHER_HOST
    }

    /** One socket per lane to forge from: its source address and port say what the worker must reject. */
    private static List<DatagramChannel> forgerSockets(final Forger forger, final SwitchAddress sw) throws IOException {
        final List<DatagramChannel> out = new ArrayList<>();
        for (int lane = 0; lane < sw.lanes(); lane++) {
            out.add(DatagramChannel.open()
                    .bind(
                            forger == Forger.OTHER_PORT
                                    ? new InetSocketAddress(sw.host(), 0)
                                    : new InetSocketAddress(
                                            OTHER_HOST, sw.lanePorts().get(lane))));
        }
        return out;
    }

    /** A RESULT for packet g of the job's first call, right in everything but its sender and values. */
    private static byte[] forgedResult(final JobSpec spec, final int g, final SplittableRandom rnd) {
        return UdpPeer.datagram(
                Kind.RESULT.code(),
                Wire.setOf(g, POOL),
                K,
                spec.jobId(),
                spec.generation(),
                rnd.nextInt(spec.numWorkers()),
                Wire.slotOf(g, POOL),
                rnd.nextInt(-200, 200),
                g,
                spec.secret(),
                rnd.ints(K).toArray());
    }

    private static void forge(
            final List<DatagramChannel> from, final byte[] datagram, final int slot, final InetSocketAddress to)
            throws IOException {
        final int sent = from.get(slot % LANES).send(ByteBuffer.wrap(datagram), to);
        assertEquals(datagram.length, sent, "the forger's socket took the whole datagram");
    }

    /** Waits until {@code counter} of {@code worker}'s stats reaches {@code least}; bounded. Returns the count. */
    private static long awaitAtLeast(
            final SwitchMLClient worker,
            final ToLongFunction<ClientStats> counter,
            final long least,
            final String what) {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        long seen;
        do {
            seen = counter.applyAsLong(worker.stats());
            if (seen >= least) {
                return seen;
            }
        } while (System.nanoTime() < deadline);
        return fail("worker " + worker.localAddress() + ": " + what + " is " + seen + " after " + WAIT_MS
                + " ms, expected at least " + least);
    }

    /** Waits until {@code counter} of {@code worker}'s stats reaches {@code expected}, and checks it stops there. */
    private static void awaitCount(
            final SwitchMLClient worker,
            final ToLongFunction<ClientStats> counter,
            final long expected,
            final String what) {
        assertEquals(
                expected,
                awaitAtLeast(worker, counter, expected, what),
                "worker " + worker.localAddress() + ": " + what);
    }

    @ParameterizedTest
    @EnumSource(Forger.class)
    void forgedResultsAreDroppedCountedAndEveryWorkerStaysExact(final Forger kind) throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("result sender " + kind, 6151L + kind.ordinal()));
        final int n = 2 + rnd.nextInt(3);
        final int length = 40 * K + rnd.nextInt(K);
        final double[][] in = new double[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, length);
        }
        final SwitchAddress sw = cluster.sw.address();
        final List<DatagramChannel> forger = forgerSockets(kind, sw);
        final ExecutorService threads = Executors.newFixedThreadPool(n + 1);
        try (TestCluster.Job job = cluster.job(9100 + kind.ordinal(), 5, n, K, POOL, ClientOptions.defaults())) {
            final JobSpec spec = job.spec();
            final List<SwitchMLClient> w = job.clients();
            final List<Future<double[]>> calls = new ArrayList<>();
            for (int r = 0; r < n - 1; r++) {
                final int rank = r;
                calls.add(threads.submit(() -> job.session(rank).allReduce(in[rank], false)));
            }
            // Every worker but the last has sent its first window (packets 0..POOL-1, all look-ahead) and waits
            // for the last one: those packets stay outstanding, and a result for one of them would complete it.
            for (int r = 0; r < n - 1; r++) {
                awaitAtLeast(w.get(r), ClientStats::packetsSent, POOL, "packets sent");
            }
            final long[] forgedTo = new long[n];
            for (int round = 0; round < ROUNDS; round++) {
                for (int r = 0; r < n; r++) {
                    for (int g = 0; g < POOL; g++) {
                        forge(forger, forgedResult(spec, g, rnd), g, w.get(r).localAddress());
                        forgedTo[r]++;
                    }
                }
                // A socket's receive buffer is bounded: let each round be read before the next is sent.
                for (int r = 0; r < n - 1; r++) {
                    awaitCount(
                            w.get(r),
                            ClientStats::resultsFromUnknownSender,
                            forgedTo[r],
                            "results from unknown senders");
                }
                // The last worker has no call running: what it receives is ignored, not checked.
                awaitCount(w.get(n - 1), ClientStats::resultsIgnored, forgedTo[n - 1], "results ignored");
            }
            for (int r = 0; r < n - 1; r++) {
                final ClientStats s = w.get(r).stats();
                assertEquals(0, s.resultsAccepted(), "rank " + r + " accepted a result before the last worker started");
                assertEquals(forgedTo[r], s.resultsIgnored(), "rank " + r + ": every forgery dropped, nothing else");
            }

            // The last worker starts while a forger keeps sending to every worker until all calls are done.
            final AtomicBoolean running = new AtomicBoolean(true);
            final long forgerSeed = rnd.nextLong();
            final int packets = (length + K - 1) / K + POOL; // the call's blocks and look-ahead
            final Future<Long> flood = threads.submit(() -> {
                final SplittableRandom f = new SplittableRandom(forgerSeed);
                long sent = 0;
                while (running.get() && sent < MAX_FORGED_WHILE_RUNNING) {
                    final int g = f.nextInt(packets);
                    forge(
                            forger,
                            forgedResult(spec, g, f),
                            g,
                            w.get(f.nextInt(n)).localAddress());
                    sent++;
                }
                return sent;
            });
            calls.add(threads.submit(() -> job.session(n - 1).allReduce(in[n - 1], false)));
            final List<double[]> out = new ArrayList<>();
            try {
                for (final Future<double[]> c : calls) {
                    out.add(c.get(WAIT_MS, TimeUnit.MILLISECONDS));
                }
            } finally {
                running.set(false);
            }
            final long flooded = flood.get(WAIT_MS, TimeUnit.MILLISECONDS);

            final double[] expected = Reference.fp32(in, K);
            assertArrayEquals(ExactSum.fp32(in, K), expected, 0.0, "the reference is the exact sum");
            long unknown = 0;
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, out.get(r), 0.0, "rank " + r + " differs from the exact sum");
                final ClientStats s = w.get(r).stats();
                assertEquals(0, s.resultsWithBadSecret(), "rank " + r + ": " + s);
                assertEquals(0, s.resultsOfOtherGeneration(), "rank " + r + ": " + s);
                unknown += s.resultsFromUnknownSender();
            }
            System.out.println("[result-sender] " + kind + " n=" + n + " length=" + length + ": "
                    + (ROUNDS * POOL * n) + " forged while the first workers waited, " + flooded
                    + " while the job ran; " + unknown + " dropped as from an unknown sender; "
                    + w.get(0).stats());
        } finally {
            threads.shutdownNow();
            for (final DatagramChannel c : forger) {
                c.close();
            }
        }
    }

    /**
     * Positive control of the test above: the same forgeries, sent to workers whose first window waits, are
     * dropped from either wrong sender and accepted from the switch's lane port, so the test above fails when the
     * sender check is gone. The workers reach the switch through a {@link SwitchRelay}, whose lane sockets they
     * take for the switch's lanes; the forger sends from those.
     */
    @Test
    void theSameForgeriesFromTheSwitchsLanePortAreAccepted() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("result sender control", 6163L));
        final int n = 2 + rnd.nextInt(3);
        final int length = 40 * K + rnd.nextInt(K);
        final ExecutorService threads = Executors.newFixedThreadPool(n);
        final List<DatagramChannel> forgers = new ArrayList<>();
        try (TestCluster.RelayedJob relayed = cluster.relayedJob(9110, 5, n, K, POOL, ClientOptions.defaults())) {
            final TestCluster.Job job = relayed.job();
            final JobSpec spec = job.spec();
            final List<SwitchMLClient> w = job.clients();
            final SwitchAddress sw = relayed.relay().address(); // the switch, as the workers know it
            final List<DatagramChannel> otherPort = forgerSockets(Forger.OTHER_PORT, sw);
            forgers.addAll(otherPort);
            final List<DatagramChannel> otherHost = forgerSockets(Forger.OTHER_HOST, sw);
            forgers.addAll(otherHost);
            for (int r = 0; r < n - 1; r++) {
                final double[] in = Vectors.mixed(rnd, length);
                final JobSession s = job.session(r);
                threads.submit(() -> s.allReduce(in, false));
            }
            for (int r = 0; r < n - 1; r++) {
                awaitAtLeast(w.get(r), ClientStats::packetsSent, POOL, "packets sent");
            }
            for (int r = 0; r < n - 1; r++) {
                final InetSocketAddress to = w.get(r).localAddress();
                final byte[][] forged = new byte[POOL][];
                for (int g = 0; g < POOL; g++) {
                    forged[g] = forgedResult(spec, g, rnd);
                    forge(otherPort, forged[g], g, to);
                    forge(otherHost, forged[g], g, to);
                }
                awaitCount(w.get(r), ClientStats::resultsFromUnknownSender, 2L * POOL, "results from unknown senders");
                assertEquals(
                        0,
                        w.get(r).stats().resultsAccepted(),
                        "rank " + r + ": " + w.get(r).stats());
                // The very same datagrams from the lane port of their slot: the switch, as far as the worker knows.
                for (int g = 0; g < POOL; g++) {
                    relayed.relay()
                            .sendFromLane(sw.lanePorts().indexOf(sw.portForSlot(Wire.slotOf(g, POOL))), forged[g], to);
                }
                awaitCount(w.get(r), ClientStats::resultsAccepted, POOL, "forged results accepted");
                final ClientStats s = w.get(r).stats();
                assertEquals(2L * POOL, s.resultsIgnored(), "rank " + r + ": only the other senders' dropped: " + s);
                assertEquals(0, s.resultsWithBadSecret() + s.resultsOfOtherGeneration(), "rank " + r + ": " + s);
            }
            System.out.println("[result-sender] control n=" + n + ": the " + POOL + " forgeries each waiting worker "
                    + "dropped from two other senders, it accepted from the switch's lane port; "
                    + w.get(0).stats());
        } finally {
            // The waiting calls fail when their sockets close (the last worker never started); nobody waits on them.
            threads.shutdownNow();
            for (final DatagramChannel c : forgers) {
                c.close();
            }
        }
    }

    /**
     * Each check of the receive rule counts its own reason, through the socket handler: a datagram with the
     * right credentials from the other lane's port, from another host with the right port, without the
     * secret, or of another generation.
     */
    @Test
    void everyCheckOfTheReceiveRuleCountsItsReason() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("result sender reasons", 6173));
        final SwitchAddress sw = new SwitchAddress("127.0.0.1", List.of(48864, 48865));
        try (SwitchMLClient client = SwitchMLClient.open(ClientOptions.defaults())) {
            final JobSpec spec = new JobSpec(
                    9200, 3, K, POOL, List.of(client.localAddress(), new InetSocketAddress("127.0.0.1", 9)));
            final JobSession session = client.join(spec, 0, sw);
            final double[] in = rnd.doubles(8 * K).toArray();
            final AllReduceOperation op = new AllReduceOperation(
                    client, session, VectorCodec.forDoubles(in, new double[in.length], K, 2, false), 0, WAIT_MS);
            final int g = 3;
            final int slot = Wire.slotOf(g, POOL);
            final InetSocketAddress lane = new InetSocketAddress("127.0.0.1", sw.portForSlot(slot));
            final InetSocketAddress otherLane = new InetSocketAddress("127.0.0.1", sw.portForSlot(slot + 1));
            final InetSocketAddress otherHost = new InetSocketAddress(OTHER_HOST, sw.portForSlot(slot));
            final int[] payload = rnd.ints(K).toArray();
            final byte[] good = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g,
                    spec.secret(),
                    payload);
            final byte[] badSecret = UdpPeer.datagram(
                    Kind.RETRANSMIT_RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g,
                    spec.secret() ^ 1,
                    payload);
            final byte[] otherGeneration = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation() + 1,
                    1,
                    slot,
                    0,
                    g,
                    spec.secret(),
                    payload);
            final byte[] wrongSlot = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    0xFFFF,
                    0,
                    g,
                    spec.secret(),
                    payload);
            client.loop()
                    .submit(() -> {
                        final SwitchMLClient.Handler h = client.handler();
                        h.activate(spec.jobId(), op);
                        try {
                            h.channelRead(null, packet(good, otherLane, client));
                            h.channelRead(null, packet(good, otherHost, client));
                            h.channelRead(null, packet(badSecret, lane, client));
                            h.channelRead(null, packet(otherGeneration, lane, client));
                            // From the switch, right in every respect but that nothing is outstanding (the call never
                            // started).
                            h.channelRead(null, packet(good, lane, client));
                            // A slot outside the pool, from its lane's port: no outstanding packet has it.
                            final InetSocketAddress itsLane =
                                    new InetSocketAddress("127.0.0.1", sw.portForSlot(0xFFFF));
                            h.channelRead(null, packet(wrongSlot, itsLane, client));
                            // Too short to be a result.
                            h.channelRead(null, packet(new byte[] {0x12, 0}, lane, client));
                        } finally {
                            h.deactivate(spec.jobId(), op);
                        }
                    })
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
            final ClientStats s = client.stats();
            assertEquals(0, s.resultsAccepted(), s.toString());
            assertEquals(2, s.resultsFromUnknownSender(), s.toString());
            assertEquals(1, s.resultsWithBadSecret(), s.toString());
            assertEquals(1, s.resultsOfOtherGeneration(), s.toString());
            assertEquals(7, s.resultsIgnored(), s.toString());
            assertFalse(op.future().isDone(), "nothing failed the call");
        }
    }

    /**
     * Positive control of the test above: with the call running (its first window sent to lanes of the test's
     * own, so packet 3 is outstanding), the same checks still drop what the test above drops, for the same reasons,
     * and accept the datagram that is right in every respect, once: what the test above sees dropped is dropped
     * for the reason it counts, not because nothing could be accepted.
     */
    @Test
    void theSameChecksAcceptTheGenuineResultOnceTheCallRuns() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("result sender genuine", 6197));
        try (UdpPeer lane0 = new UdpPeer();
                UdpPeer lane1 = new UdpPeer();
                SwitchMLClient client = SwitchMLClient.open(ClientOptions.defaults())) {
            final SwitchAddress sw = new SwitchAddress(
                    "127.0.0.1",
                    List.of(lane0.address().getPort(), lane1.address().getPort()));
            final JobSpec spec = new JobSpec(
                    9201, 3, K, POOL, List.of(client.localAddress(), new InetSocketAddress("127.0.0.1", 9)));
            final JobSession session = client.join(spec, 0, sw);
            final double[] in = rnd.doubles(8 * K).toArray();
            final AllReduceOperation op = new AllReduceOperation(
                    client, session, VectorCodec.forDoubles(in, new double[in.length], K, 2, false), 0, WAIT_MS);
            final int g = 3;
            final int slot = Wire.slotOf(g, POOL);
            final InetSocketAddress lane = new InetSocketAddress("127.0.0.1", sw.portForSlot(slot));
            final InetSocketAddress otherLane = new InetSocketAddress("127.0.0.1", sw.portForSlot(slot + 1));
            final InetSocketAddress otherHost = new InetSocketAddress(OTHER_HOST, sw.portForSlot(slot));
            final int[] payload = rnd.ints(K).toArray();
            final byte[] good = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g,
                    spec.secret(),
                    payload);
            final byte[] badSecret = UdpPeer.datagram(
                    Kind.RETRANSMIT_RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g,
                    spec.secret() ^ 1,
                    payload);
            final byte[] otherGeneration = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation() + 1,
                    1,
                    slot,
                    0,
                    g,
                    spec.secret(),
                    payload);
            final byte[] otherSet = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    1 - Wire.setOf(g, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g,
                    spec.secret(),
                    payload);
            final byte[] notOutstanding = UdpPeer.datagram(
                    Kind.RESULT.code(),
                    Wire.setOf(g + POOL, POOL),
                    K,
                    spec.jobId(),
                    spec.generation(),
                    1,
                    slot,
                    0,
                    g + POOL,
                    spec.secret(),
                    payload);
            client.loop().submit(op::start).get(WAIT_MS, TimeUnit.MILLISECONDS);
            try {
                // The first window went to the test's lanes: packet g among it, on its slot's lane.
                final List<Integer> seqs = new ArrayList<>();
                for (final UdpPeer p : List.of(lane0, lane1)) {
                    for (byte[] d = p.receive(WAIT_MS); d != null; d = p.receive(200)) {
                        if (ByteBuffer.wrap(d).getShort(12) == slot) {
                            assertEquals(sw.portForSlot(slot), p.address().getPort(), "packet " + g + "'s lane");
                        }
                        seqs.add(ByteBuffer.wrap(d).getInt(16));
                    }
                }
                assertTrue(seqs.contains(g), "packet " + g + " was sent: " + seqs);
                final ClientStats before = client.stats();
                client.loop()
                        .submit(() -> {
                            final SwitchMLClient.Handler h = client.handler();
                            h.channelRead(null, packet(good, otherLane, client));
                            h.channelRead(null, packet(good, otherHost, client));
                            h.channelRead(null, packet(badSecret, lane, client));
                            h.channelRead(null, packet(otherGeneration, lane, client));
                            h.channelRead(null, packet(otherSet, lane, client));
                            h.channelRead(null, packet(notOutstanding, lane, client));
                        })
                        .get(WAIT_MS, TimeUnit.MILLISECONDS);
                final ClientStats dropped = client.stats();
                assertEquals(0, dropped.resultsAccepted(), dropped.toString());
                assertEquals(
                        2, dropped.resultsFromUnknownSender() - before.resultsFromUnknownSender(), dropped.toString());
                assertEquals(1, dropped.resultsWithBadSecret() - before.resultsWithBadSecret(), dropped.toString());
                assertEquals(
                        1, dropped.resultsOfOtherGeneration() - before.resultsOfOtherGeneration(), dropped.toString());
                assertEquals(6, dropped.resultsIgnored() - before.resultsIgnored(), dropped.toString());
                // The genuine one, from its lane: accepted; a second copy finds nothing outstanding.
                client.loop()
                        .submit(() -> {
                            client.handler().channelRead(null, packet(good, lane, client));
                            client.handler().channelRead(null, packet(good, lane, client));
                        })
                        .get(WAIT_MS, TimeUnit.MILLISECONDS);
                final ClientStats end = client.stats();
                assertEquals(1, end.resultsAccepted(), end.toString());
                assertEquals(7, end.resultsIgnored() - before.resultsIgnored(), end.toString());
                assertFalse(op.future().isDone(), "one packet of " + op.totalPackets() + " answered: the call runs on");
            } finally {
                op.cancel(new SwitchMLException("the test is over"));
            }
            final Throwable e = assertThrows(Exception.class, () -> op.future().get(WAIT_MS, TimeUnit.MILLISECONDS));
            assertTrue(String.valueOf(e.getCause()).contains("the test is over"), String.valueOf(e));
        }
    }

    private static DatagramPacket packet(final byte[] datagram, final InetSocketAddress from, final SwitchMLClient to) {
        return new DatagramPacket(Unpooled.wrappedBuffer(datagram), to.localAddress(), from);
    }
}

package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;
import org.switchml.testing.ExactSum;
import org.switchml.testing.Seeds;
import org.switchml.testing.SwitchRelay;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/**
 * Fuzzes a worker's receive path over real UDP while a real job runs through the software switch: at least
 * {@value #JUNK_WHILE_WAITING} junk results at one worker (the victim). Each junk datagram starts as a
 * well-formed RESULT of one of the job's packets, built with the protocol's own header writer and carrying the
 * job's id, generation and secret.
 *
 * <p>Two thirds of it comes from sockets that are not the switch's lanes, sent as it is (the right secret from
 * a wrong sender) or mutated: bit flips, truncation, extension, random bytes, or one header field changed.
 * The rest comes from the right sender, the switch's lane of the slot the datagram names, so that it passes
 * the sender check and meets the checks after it: a wrong secret, another generation, another k, a set, slot
 * or sequence number that matches no outstanding packet (each changed so that no packet of the job can ever
 * match). To send from the right sender the workers reach the switch through a {@link SwitchRelay}, a real UDP
 * hop whose lane sockets the workers take for the switch's lanes (every result they get comes from there), and
 * the junk is sent from those very sockets. The alternatives are not real or not robust: a socket cannot be
 * bound to the switch's own address and port while the switch holds them (sharing them with SO_REUSEPORT
 * would need the switch to ask for it, and the kernel would then hand some of the workers' contributions to
 * the junk socket), and Java has no raw sockets to forge a source address.
 *
 * <p>Phase 1: every worker but the last has started the job's first call, so the victim's call runs and
 * waits for the last worker while the junk comes in rounds; after each round the victim's counters must
 * account for every datagram of it, by an oracle written from docs/protocol.md section 3 (receive rule):
 * junk from a wrong sender that reaches the sender check (a result's length, version and kind, the running
 * call's job id) counts as from an unknown sender; junk from the right sender with a wrong secret counts as
 * such, with another generation as such; everything is dropped, and nothing is accepted. Phase 2: the last
 * worker starts and junk keeps coming, unpaced, while the job's calls (FP32_BLOCK, INT32, FP64_SPLIT) run.
 * Every call completes; every worker's sums are bit-exact against an independent oracle ({@link ExactSum},
 * integer sums); and every worker accepted exactly one result per packet of its calls, so no junk was
 * accepted, not even junk from the switch's own lane port.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClientReceiveFuzzTest {
    private static final int K = 64;
    private static final int POOL = 16;
    private static final int LANES = 2;
    private static final int JOB = 9300;
    private static final int GENERATION = 4;
    /** Junk sent while the victim's first call waits for the last worker, accounted round by round. */
    private static final int JUNK_WHILE_WAITING = 100_000;

    private static final int ROUND = 500;
    /** Bound on the junk sent while the job's calls run. */
    private static final int MAX_JUNK_WHILE_RUNNING = 100_000;

    private static final long WAIT_MS = 60_000;
    /** Loopback addresses other than the switch's (Linux routes all of 127/8 to lo). */
    private static final String OTHER_HOST = "127.0.0.2";

    /** What was done to a junk datagram (each counted, and each must occur). */
    enum Mutation {
        /** The well-formed result itself: the job's secret from a wrong sender. */
        VERBATIM,
        /** 1 to 16 random bits flipped anywhere. */
        BIT_FLIPS,
        /** Cut to 1 .. length - 1 bytes. */
        TRUNCATE,
        /** 1 to 512 random bytes appended. */
        EXTEND,
        /** Random bytes of a random length (sometimes a result's), half of them with the job's id. */
        RANDOM_BYTES,
        VERSION,
        KIND,
        SET,
        ENCODING,
        K_FIELD,
        JOB_ID,
        GENERATION,
        RANK,
        SLOT,
        EXPONENT,
        SEQ,
        SECRET
    }

    /**
     * Junk sent from the right sender (the lane of the slot it names): one field changed so that a check after
     * the sender check rejects it, whatever the worker's state; each counted, and each must occur.
     */
    enum LateCheck {
        /** Another secret: counted as a result with a bad secret. */
        SECRET,
        /** Another generation (the right secret): counted as a result of another generation. */
        GENERATION,
        /** Another k: ignored. */
        K_FIELD,
        /** The other set than the sequence number's: ignored. */
        SET,
        /** A slot other than the sequence number's, sent from that slot's lane: ignored. */
        SLOT,
        /** A sequence number whose slot is not the one named: ignored. */
        SEQ,
        /**
         * Right in every field, for a packet of the first call that is not outstanding while the victim waits
         * for the first window (phase 1 only: later, such a result could be a genuine one's twin).
         */
        NOT_OUTSTANDING
    }

    /** Where a junk datagram went in the receive rule, as the oracle predicts it. */
    enum Expected {
        /** Dropped before the sender check. */
        IGNORED_EARLY,
        /** Counted as from an unknown sender. */
        UNKNOWN_SENDER,
        /** From the right sender, counted as with a bad secret. */
        BAD_SECRET,
        /** From the right sender, counted as of another generation. */
        OTHER_GENERATION,
        /** From the right sender, dropped by a later check (k, set, slot, sequence number, nothing outstanding). */
        IGNORED_LATE
    }

    /** The job's calls, the same on every worker: their lengths and encodings. */
    private record Call(Encoding encoding, int length) {
        /** Packets of the call: its blocks, plus a look-ahead of min(pool, blocks) for the FP encodings. */
        int packets() {
            final int perPacket = encoding == Encoding.FP64_SPLIT ? K / 2 : K;
            final int blocks = (length + perPacket - 1) / perPacket;
            return encoding == Encoding.INT32 ? blocks : blocks + Math.min(POOL, blocks);
        }
    }

    @Test
    void junkAtAWorkerIsCountedNeverAcceptedAndEveryWorkerStaysExact() throws Exception {
        final long seed = Seeds.perRun("client receive fuzz");
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int n = 3 + rnd.nextInt(3);
        final List<Call> plan = List.of(
                new Call(Encoding.FP32_BLOCK, 40 * K + rnd.nextInt(K)),
                new Call(Encoding.INT32, 30 * K + rnd.nextInt(K)),
                new Call(Encoding.FP64_SPLIT, 20 * K + rnd.nextInt(K)));
        final double[][][] doubles = new double[plan.size()][n][];
        final int[][][] ints = new int[plan.size()][n][];
        for (int c = 0; c < plan.size(); c++) {
            for (int r = 0; r < n; r++) {
                if (plan.get(c).encoding() == Encoding.INT32) {
                    ints[c][r] = rnd.ints(plan.get(c).length()).toArray();
                } else {
                    doubles[c][r] = Vectors.mixed(rnd, plan.get(c).length());
                }
            }
        }
        int packets = 0;
        for (final Call c : plan) {
            packets += c.packets();
        }
        final ExecutorService threads = Executors.newFixedThreadPool(n + 1);
        final int firstCall = plan.get(0).packets();
        try (TestCluster cluster = TestCluster.start(SwitchOptions.loopback(LANES));
                TestCluster.RelayedJob relayed = cluster.relayedJob(
                        JOB, GENERATION, n, K, POOL, ClientOptions.defaults().withResultTimeoutMs(WAIT_MS));
                Junk junk = new Junk(relayed.job().spec(), relayed.relay(), packets, firstCall, rnd.split())) {
            final TestCluster.Job job = relayed.job();
            final List<SwitchMLClient> w = job.clients();
            final SwitchMLClient victim = w.get(0);
            final CountDownLatch lastMayStart = new CountDownLatch(1);
            final List<Future<List<Object>>> workers = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                final int rank = r;
                workers.add(threads.submit(() -> {
                    if (rank == n - 1) {
                        assertTrue(lastMayStart.await(WAIT_MS, TimeUnit.MILLISECONDS), "phase 1 did not end");
                    }
                    final JobSession s = job.session(rank);
                    final List<Object> out = new ArrayList<>();
                    for (int c = 0; c < plan.size(); c++) {
                        out.add(
                                switch (plan.get(c).encoding()) {
                                    case INT32 -> s.allReduce(ints[c][rank]);
                                    case FP32_BLOCK -> s.allReduce(doubles[c][rank], false);
                                    case FP64_SPLIT -> s.allReduce(doubles[c][rank], true);
                                });
                    }
                    return out;
                }));
            }
            // The victim has sent its first window (all look-ahead) and waits for the last worker: its call runs.
            awaitAtLeast(victim, ClientStats::packetsSent, POOL, "packets sent");

            final long t0 = System.nanoTime();
            final ClientStats before = victim.stats();
            final Map<Expected, Long> expected = new EnumMap<>(Expected.class);
            long sent = 0;
            while (sent < JUNK_WHILE_WAITING) {
                for (int i = 0; i < ROUND; i++) {
                    expected.merge(junk.send(victim.localAddress(), true), 1L, Long::sum);
                    sent++;
                }
                // A socket's receive buffer is bounded: each round is read before the next is sent.
                awaitAtLeast(
                        victim,
                        s -> s.resultsIgnored()
                                + s.resultsAccepted()
                                - before.resultsIgnored()
                                - before.resultsAccepted(),
                        sent,
                        "junk read");
                final ClientStats now = victim.stats();
                final String what = " (" + sent + " sent, expected " + expected + "): " + now;
                assertEquals(before.resultsAccepted(), now.resultsAccepted(), "junk accepted" + what);
                assertEquals(
                        expected.getOrDefault(Expected.UNKNOWN_SENDER, 0L),
                        now.resultsFromUnknownSender() - before.resultsFromUnknownSender(),
                        "junk from a wrong sender that reached the sender check" + what);
                assertEquals(
                        expected.getOrDefault(Expected.BAD_SECRET, 0L),
                        now.resultsWithBadSecret() - before.resultsWithBadSecret(),
                        "junk from the switch's lane with another secret" + what);
                assertEquals(
                        expected.getOrDefault(Expected.OTHER_GENERATION, 0L),
                        now.resultsOfOtherGeneration() - before.resultsOfOtherGeneration(),
                        "junk from the switch's lane of another generation" + what);
            }
            final ClientStats waited = victim.stats();
            final long phase1Ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(sent, waited.resultsIgnored() - before.resultsIgnored(), "every junk datagram dropped, once");
            assertEquals(
                    before.resultsAccepted(),
                    waited.resultsAccepted(),
                    "a result accepted before the last worker started");
            for (final Expected e : Expected.values()) {
                assertTrue(expected.getOrDefault(e, 0L) > 0, "the junk reached every kind of drop: " + expected);
            }

            // Phase 2: the last worker starts; junk keeps coming, unpaced, until every call is done.
            final AtomicBoolean running = new AtomicBoolean(true);
            final Future<Long> flood = threads.submit(() -> {
                long count = 0;
                while (running.get() && count < MAX_JUNK_WHILE_RUNNING) {
                    junk.send(victim.localAddress(), false);
                    count++;
                }
                return count;
            });
            lastMayStart.countDown();
            final List<List<Object>> out = new ArrayList<>();
            try {
                for (final Future<List<Object>> f : workers) {
                    out.add(f.get(WAIT_MS, TimeUnit.MILLISECONDS));
                }
            } finally {
                running.set(false);
            }
            final long flooded = flood.get(WAIT_MS, TimeUnit.MILLISECONDS);

            for (int c = 0; c < plan.size(); c++) {
                final Call call = plan.get(c);
                for (int r = 0; r < n; r++) {
                    final String what = "rank " + r + " call " + c + " (" + call + ")";
                    switch (call.encoding()) {
                        case INT32 ->
                            assertArrayEquals(
                                    intSum(ints[c]), (int[]) out.get(r).get(c), what);
                        case FP32_BLOCK ->
                            assertArrayEquals(
                                    ExactSum.fp32(doubles[c], K),
                                    (double[]) out.get(r).get(c),
                                    0.0,
                                    what);
                        case FP64_SPLIT ->
                            assertArrayEquals(
                                    ExactSum.fp64(doubles[c], K),
                                    (double[]) out.get(r).get(c),
                                    0.0,
                                    what);
                    }
                }
            }
            final ClientStats end = victim.stats();
            for (int r = 0; r < n; r++) {
                final ClientStats s = w.get(r).stats();
                assertEquals(
                        packets, s.resultsAccepted(), "rank " + r + ": one result accepted per packet, no junk: " + s);
                if (r > 0) {
                    assertEquals(
                            0,
                            s.resultsFromUnknownSender() + s.resultsWithBadSecret() + s.resultsOfOtherGeneration(),
                            "rank " + r + " got no junk: " + s);
                }
            }
            assertTrue(
                    end.resultsFromUnknownSender() > waited.resultsFromUnknownSender(),
                    "no junk reached the running calls' sender check in phase 2: " + end);
            assertTrue(
                    end.resultsWithBadSecret() > waited.resultsWithBadSecret()
                            && end.resultsOfOtherGeneration() > waited.resultsOfOtherGeneration(),
                    "no junk from the switch's lane reached the running calls' secret and generation checks in phase 2: "
                            + end);
            assertEquals(0, cluster.sw.traffic().errors(), cluster.sw.traffic().toString());
            System.out.println("[client fuzz] n=" + n + " calls=" + plan + " (" + packets + " packets): " + sent
                    + " junk datagrams while the victim waited, in " + phase1Ms + " ms (" + expected + "), " + flooded
                    + " while the calls ran; from wrong senders " + junk.mutations + ", from the switch's lane "
                    + junk.lateChecks + "; victim " + end + "; relayed "
                    + relayed.relay().relayed() + ", stray "
                    + relayed.relay().stray());
            for (final Mutation m : Mutation.values()) {
                assertTrue(junk.mutations.getOrDefault(m, 0L) > 0, "mutation " + m + " never drawn");
            }
            for (final LateCheck m : LateCheck.values()) {
                assertTrue(
                        junk.lateChecks.getOrDefault(m, 0L) > 0, "junk " + m + " from the switch's lane never drawn");
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private static int[] intSum(final int[][] in) {
        final int[] sum = new int[in[0].length];
        for (final int[] v : in) {
            for (int i = 0; i < sum.length; i++) {
                sum[i] += v[i];
            }
        }
        return sum;
    }

    /** Waits until {@code counter} of {@code worker}'s stats reaches {@code least}; bounded. */
    private static void awaitAtLeast(
            final SwitchMLClient worker,
            final ToLongFunction<ClientStats> counter,
            final long least,
            final String what) {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
        long seen;
        do {
            seen = counter.applyAsLong(worker.stats());
            if (seen >= least) {
                return;
            }
        } while (System.nanoTime() < deadline);
        fail("worker " + worker.localAddress() + ": " + what + " is " + seen + " after " + WAIT_MS
                + " ms, expected at least " + least);
    }

    /**
     * The junk generator and its sockets: one on the switch's host with another port, one per lane on
     * another loopback host with that lane's port, and the relay's lanes (the right sender). Used by one
     * thread at a time.
     */
    private static final class Junk implements AutoCloseable {
        private final JobSpec spec;
        private final SwitchRelay relay;
        private final int packets;
        private final int firstCall;
        private final SplittableRandom rnd;
        private final DatagramChannel otherPort;
        private final List<DatagramChannel> otherHost = new ArrayList<>();
        private final int length = Wire.datagramLength(K);
        final Map<Mutation, Long> mutations = new EnumMap<>(Mutation.class);
        final Map<LateCheck, Long> lateChecks = new EnumMap<>(LateCheck.class);

        Junk(
                final JobSpec spec,
                final SwitchRelay relay,
                final int packets,
                final int firstCall,
                final SplittableRandom rnd)
                throws IOException {
            this.spec = spec;
            this.relay = relay;
            this.packets = packets;
            this.firstCall = firstCall;
            this.rnd = rnd;
            final SwitchAddress sw = relay.address();
            this.otherPort = DatagramChannel.open().bind(new InetSocketAddress(sw.host(), 0));
            for (int lane = 0; lane < sw.lanes(); lane++) {
                otherHost.add(DatagramChannel.open()
                        .bind(new InetSocketAddress(OTHER_HOST, sw.lanePorts().get(lane))));
            }
        }

        /**
         * Sends one junk datagram to {@code to}: a third from the switch's lane, the rest from a wrong sender.
         * Returns where the receive rule drops it while the job's call runs there, and, when {@code waiting},
         * the victim waits for the first window of the first call (which NOT_OUTSTANDING needs).
         */
        Expected send(final InetSocketAddress to, final boolean waiting) throws IOException {
            if (rnd.nextInt(3) == 0) {
                return sendFromTheLane(to, waiting);
            }
            final int g = rnd.nextInt(packets);
            final byte[] d = mutate(result(g));
            final DatagramChannel from = rnd.nextBoolean() ? otherPort : otherHost.get(Wire.slotOf(g, POOL) % LANES);
            final int sent = from.send(ByteBuffer.wrap(d), to);
            assertEquals(d.length, sent, "the junk socket took the whole datagram");
            return reachesSenderCheck(d) ? Expected.UNKNOWN_SENDER : Expected.IGNORED_EARLY;
        }

        /** Junk from the lane of the slot it names: one field changed so that a later check rejects it. */
        private Expected sendFromTheLane(final InetSocketAddress to, final boolean waiting) {
            final LateCheck m = LateCheck.values()[
                    rnd.nextInt(waiting ? LateCheck.values().length : LateCheck.values().length - 1)];
            lateChecks.merge(m, 1L, Long::sum);
            final int g = m == LateCheck.NOT_OUTSTANDING ? POOL + rnd.nextInt(firstCall - POOL) : rnd.nextInt(packets);
            final byte[] d = result(g);
            final ByteBuffer b = ByteBuffer.wrap(d);
            final Expected e;
            switch (m) {
                case SECRET -> {
                    b.putInt(20, spec.secret() ^ (1 + rnd.nextInt(Integer.MAX_VALUE)));
                    e = Expected.BAD_SECRET;
                }
                case GENERATION -> {
                    b.putShort(8, (short) other(spec.generation(), 1 << 16));
                    e = Expected.OTHER_GENERATION;
                }
                case K_FIELD -> {
                    b.putShort(2, (short) other(K, 1 << 16));
                    e = Expected.IGNORED_LATE;
                }
                case SET -> {
                    d[1] ^= (byte) 0x80;
                    e = Expected.IGNORED_LATE;
                }
                case SLOT -> {
                    b.putShort(12, (short) other(Wire.slotOf(g, POOL), 1 << 16));
                    e = Expected.IGNORED_LATE;
                }
                case SEQ -> {
                    // Any sequence number whose slot is not the one the datagram names (0 to 2^31 - 1).
                    final int seq = rnd.nextInt(Integer.MAX_VALUE / POOL) * POOL
                            + (Wire.slotOf(g, POOL) + 1 + rnd.nextInt(POOL - 1)) % POOL;
                    b.putInt(16, seq);
                    e = Expected.IGNORED_LATE;
                }
                case NOT_OUTSTANDING -> e = Expected.IGNORED_LATE;
                default -> throw new IllegalStateException(String.valueOf(m));
            }
            // The sender check takes the lane from the slot the datagram names.
            relay.sendFromLane((b.getShort(12) & 0xFFFF) % LANES, d, to);
            return e;
        }

        /** A well-formed RESULT (or RETRANSMIT_RESULT) of packet {@code g} of the job, random values. */
        private byte[] result(final int g) {
            final ByteBuf buf = Unpooled.buffer(length);
            try {
                Wire.writeHeader(
                        buf,
                        0,
                        rnd.nextBoolean() ? Kind.RESULT : Kind.RETRANSMIT_RESULT,
                        Wire.setOf(g, POOL),
                        Encoding.FP32_BLOCK,
                        K,
                        spec.jobId(),
                        spec.generation(),
                        rnd.nextInt(spec.numWorkers()),
                        Wire.slotOf(g, POOL),
                        (short) rnd.nextInt(-200, 200),
                        g,
                        spec.secret());
                for (int i = Wire.PAYLOAD_OFFSET; i < length; i += 4) {
                    buf.setInt(i, rnd.nextInt());
                }
                final byte[] d = new byte[length];
                buf.getBytes(0, d);
                return d;
            } finally {
                buf.release();
            }
        }

        private byte[] mutate(final byte[] d) {
            final Mutation m = Mutation.values()[rnd.nextInt(Mutation.values().length)];
            mutations.merge(m, 1L, Long::sum);
            final ByteBuffer b = ByteBuffer.wrap(d); // big-endian, as on the wire
            switch (m) {
                case VERBATIM -> {
                    return d;
                }
                case BIT_FLIPS -> {
                    for (int i = 1 + rnd.nextInt(16); i > 0; i--) {
                        final int bit = rnd.nextInt(8 * d.length);
                        d[bit >>> 3] ^= (byte) (1 << (bit & 7));
                    }
                    return d;
                }
                case TRUNCATE -> {
                    return Arrays.copyOf(d, 1 + rnd.nextInt(d.length - 1));
                }
                case EXTEND -> {
                    final byte[] longer = Arrays.copyOf(d, d.length + 1 + rnd.nextInt(512));
                    for (int i = d.length; i < longer.length; i++) {
                        longer[i] = (byte) rnd.nextInt();
                    }
                    return longer;
                }
                case RANDOM_BYTES -> {
                    final byte[] r = new byte[rnd.nextBoolean() ? d.length : 1 + rnd.nextInt(2 * d.length)];
                    for (int i = 0; i < r.length; i++) {
                        r[i] = (byte) rnd.nextInt();
                    }
                    if (r.length >= 8 && rnd.nextBoolean()) {
                        ByteBuffer.wrap(r).putInt(4, spec.jobId());
                    }
                    return r;
                }
                case VERSION -> d[0] = (byte) ((other(1, 16) << 4) | (d[0] & 0x0F));
                case KIND -> d[0] = (byte) ((d[0] & 0xF0) | rnd.nextInt(16));
                case SET -> d[1] ^= (byte) 0x80;
                case ENCODING -> d[1] = (byte) ((d[1] & 0xF0) | rnd.nextInt(16));
                case K_FIELD -> b.putShort(2, (short) other(K, 1 << 16));
                case JOB_ID -> b.putInt(4, spec.jobId() ^ (1 + rnd.nextInt(Integer.MAX_VALUE)));
                case GENERATION -> b.putShort(8, (short) other(spec.generation(), 1 << 16));
                case RANK -> d[10] = (byte) rnd.nextInt(256);
                case SLOT -> b.putShort(12, (short) rnd.nextInt(1 << 16));
                case EXPONENT -> b.putShort(14, (short) rnd.nextInt(1 << 16));
                case SEQ -> b.putInt(16, rnd.nextInt());
                case SECRET -> b.putInt(20, spec.secret() ^ (1 + rnd.nextInt(Integer.MAX_VALUE)));
            }
            return d;
        }

        /** A value in [0, bound) other than {@code not}. */
        private int other(final int not, final int bound) {
            final int v = rnd.nextInt(bound - 1);
            return v >= not ? v + 1 : v;
        }

        /**
         * The receive rule, from docs/protocol.md section 3, for a datagram from a wrong sender while a call
         * of the job runs: it gets as far as the sender check only when it is exactly 24 + 4k bytes long,
         * has version 1, kind 2 or 3 and the job's id (bytes 4-7); anything else is dropped before it.
         */
        private boolean reachesSenderCheck(final byte[] d) {
            if (d.length != 24 + 4 * K) {
                return false;
            }
            final int version = (d[0] >>> 4) & 0x0F;
            final int kind = d[0] & 0x0F;
            return version == 1
                    && (kind == 2 || kind == 3)
                    && ByteBuffer.wrap(d).getInt(4) == spec.jobId();
        }

        @Override
        public void close() throws IOException {
            otherPort.close();
            for (final DatagramChannel c : otherHost) {
                c.close();
            }
        }
    }
}

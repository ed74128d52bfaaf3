package org.switchml.dataplane;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.Wire;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.UdpPeer;
import org.switchml.testing.Vectors;
import org.switchml.transport.Transports;

/**
 * Fuzzing: a million random and mutated datagrams at a live two-lane switch while two
 * real jobs allreduce through it. Every call stays exact, the switch stays up (no handler error), and its
 * counters account for every datagram: received = accepted + drops by reason, and received = what every
 * socket sent.
 *
 * <p>Each fuzz datagram starts from a well-formed contribution of one of four jobs (the two real ones,
 * whose endpoints the fuzzer does not own, and two decoy jobs registered with the fuzzer's own sockets, so
 * that mutations also reach the slot algorithm) or is random bytes, then gets up to three mutations: every
 * header field, truncation and extension, k/length mismatches, wrong ranks, slots, generations, sets and
 * secrets, sequence numbers around the 2^32 wrap, the wrong lane, and duplicates. The fuzzer pauses every
 * {@value #BATCH} datagrams for a fence (a round trip through a one-worker job on each lane), so the lanes'
 * socket buffers never overflow and every datagram sent is one the switch received.
 *
 * <p>{@code -Dswitchml.fuzz.datagrams=N} changes the count (default 10^6); the rate is printed.
 */
class SwitchFuzzTest {
    private static final int LANES = 2;
    private static final int BATCH = 512;
    private static final long WAIT_MS = 10_000;
    private static final long DATAGRAMS = Long.getLong("switchml.fuzz.datagrams", 1_000_000L);

    /** What a fuzz datagram had done to it (each counted, and each must occur). */
    enum Mutation {
        VERSION,
        KIND,
        SET,
        FLAG_RESERVED,
        ENCODING,
        K_FIELD,
        K_CONSISTENT,
        JOB_ID,
        GENERATION,
        RANK,
        RANK_RESERVED,
        SLOT,
        EXPONENT,
        SEQ,
        SEQ_WRAP,
        SECRET,
        TRUNCATE,
        EXTEND,
        PAYLOAD,
        RANDOM_BYTES,
        WRONG_LANE,
        WRONG_SOURCE,
        DUPLICATE
    }

    /** A job the fuzzer aims at; {@code sockets} are its ranks' endpoints when the fuzzer owns them. */
    private record Target(JobSpec spec, DatagramChannel[] sockets) {}

    @Test
    void aMillionRandomAndMutatedDatagramsWhileRealJobsRun() throws Exception {
        final long seed = Seeds.seed("switch fuzz", 20_240_909L);
        final SplittableRandom rnd = new SplittableRandom(seed);
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(LANES));
                Fuzzer fuzz = new Fuzzer(sw, rnd.split())) {
            final SwitchTraffic start = sw.traffic();
            // Real jobs: FP32 with look-ahead, and INT32 with another k and pool.
            final List<SwitchMLClient> a = open(3);
            final List<SwitchMLClient> b = open(2);
            try {
                final JobSpec specA = new JobSpec(0x0A, 1, 64, 16, endpoints(a));
                final JobSpec specB = new JobSpec(0x0B, 9, 16, 8, endpoints(b));
                sw.registerJob(specA);
                sw.registerJob(specB);
                fuzz.target(new Target(specA, null));
                fuzz.target(new Target(specB, null));
                fuzz.decoys();
                fuzz.seqWrapsAroundCleanly();

                final List<JobSession> sa = join(a, specA, sw);
                final List<JobSession> sb = join(b, specB, sw);
                final AtomicBoolean running = new AtomicBoolean(true);
                final long seedA = rnd.nextLong();
                final long seedB = rnd.nextLong();
                final CompletableFuture<Integer> jobA = CompletableFuture.supplyAsync(() -> loopA(sa, seedA, running));
                final CompletableFuture<Integer> jobB = CompletableFuture.supplyAsync(() -> loopB(sb, seedB, running));
                final long t0 = System.nanoTime();
                try {
                    fuzz.run(DATAGRAMS);
                } finally {
                    running.set(false);
                }
                final double seconds = (System.nanoTime() - t0) / 1e9;
                final int callsA = join(jobA);
                final int callsB = join(jobB);
                fuzz.fence();
                final SwitchTraffic end = sw.traffic();

                long workerSent = 0;
                for (final SwitchMLClient c : a) {
                    workerSent += c.stats().packetsSent();
                }
                for (final SwitchMLClient c : b) {
                    workerSent += c.stats().packetsSent();
                }
                final long received = end.received() - start.received();
                System.out.printf(
                        "[fuzz] %,d fuzz datagrams in %.2f s: %,.0f datagrams/s (plus %,d fence and %,d worker"
                                + " datagrams); exact calls: job A %d, job B %d%n",
                        fuzz.sent, seconds, fuzz.sent / seconds, fuzz.fenceSent, workerSent, callsA, callsB);
                System.out.println("[fuzz] switch " + end);
                System.out.println("[fuzz] mutations " + fuzz.applied);
                System.out.println("[fuzz] decoy results received " + fuzz.decoyResults + ", job A "
                        + sw.counters(specA.jobId()) + ", job B " + sw.counters(specB.jobId()));

                assertTrue(fuzz.sent >= DATAGRAMS, "sent " + fuzz.sent);
                assertEquals(0, end.errors(), "handler errors: the switch raised on some datagram");
                assertTrue(end.balanced(), "received != accepted + drops: " + end);
                assertEquals(
                        fuzz.sent + fuzz.fenceSent + fuzz.setupSent + workerSent,
                        received,
                        "every datagram sent reached the switch and was counted once");
                assertEquals(0, fuzz.strangerReceived, "a socket that is no job's worker received something");
                for (final DropReason r : DropReason.values()) {
                    assertTrue(end.drops(r) - start.drops(r) > 0, "no " + r + " drop: the fuzz missed a check");
                }
                for (final Mutation m : Mutation.values()) {
                    assertTrue(fuzz.applied.getOrDefault(m, 0L) > 0, "mutation " + m + " never applied");
                }
                assertTrue(callsA > 0 && callsB > 0, "the real jobs made progress during the fuzz");
                // Still up: both real jobs do one more exact call after the fuzz.
                assertEquals(1, loopA(sa, seedA + 1, new AtomicBoolean(false)));
                assertEquals(1, loopB(sb, seedB + 1, new AtomicBoolean(false)));
            } finally {
                a.forEach(SwitchMLClient::close);
                b.forEach(SwitchMLClient::close);
            }
        }
    }

    private static List<SwitchMLClient> open(final int n) {
        final List<SwitchMLClient> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            out.add(SwitchMLClient.open(ClientOptions.defaults()));
        }
        return out;
    }

    private static List<InetSocketAddress> endpoints(final List<SwitchMLClient> clients) {
        return clients.stream().map(SwitchMLClient::localAddress).toList();
    }

    private static List<JobSession> join(
            final List<SwitchMLClient> clients, final JobSpec spec, final SoftwareSwitch sw) {
        final List<JobSession> sessions = new ArrayList<>();
        for (int r = 0; r < clients.size(); r++) {
            sessions.add(clients.get(r).join(spec, r, sw.address()));
        }
        return sessions;
    }

    /** FP32 calls on job A until {@code running} is false (at least one); each checked bit for bit. */
    private static int loopA(final List<JobSession> s, final long seed, final AtomicBoolean running) {
        final JobSpec spec = s.get(0).spec();
        final SplittableRandom rnd = new SplittableRandom(seed);
        int calls = 0;
        do {
            final int len = 1 + rnd.nextInt(6_000);
            final double[][] in = new double[3][];
            for (int r = 0; r < 3; r++) {
                in[r] = Vectors.mixed(rnd, len);
            }
            final List<double[]> out = TestCluster.parallel(3, r -> s.get(r).allReduce(in[r]));
            final double[] expected = Reference.fp32(in, spec.k());
            for (int r = 0; r < 3; r++) {
                assertArrayEquals(expected, out.get(r), 0.0, "job A call " + calls + " rank " + r);
            }
            calls++;
        } while (running.get());
        return calls;
    }

    /** INT32 calls on job B until {@code running} is false (at least one); each checked exactly. */
    private static int loopB(final List<JobSession> s, final long seed, final AtomicBoolean running) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        int calls = 0;
        do {
            final int len = 1 + rnd.nextInt(3_000);
            final int[][] in = {rnd.ints(len).toArray(), rnd.ints(len).toArray()};
            final int[] expected = new int[len];
            for (int i = 0; i < len; i++) {
                expected[i] = in[0][i] + in[1][i];
            }
            final List<int[]> out = TestCluster.parallel(2, r -> s.get(r).allReduce(in[r]));
            for (int r = 0; r < 2; r++) {
                assertArrayEquals(expected, out.get(r), "job B call " + calls + " rank " + r);
            }
            calls++;
        } while (running.get());
        return calls;
    }

    private static int join(final CompletableFuture<Integer> f) throws Exception {
        try {
            return f.get(120, TimeUnit.SECONDS);
        } catch (final ExecutionException e) {
            throw new AssertionError("a real job failed during the fuzz", e.getCause());
        } catch (final TimeoutException e) {
            throw new AssertionError("a real job did not finish", e);
        }
    }

    /** The fuzzer: its sockets, the targets, the fence job; confined to the test thread. */
    private static final class Fuzzer implements AutoCloseable {
        private final SoftwareSwitch sw;
        private final SplittableRandom rnd;
        private final List<InetSocketAddress> lanes;
        /** Decoy ranks 0 and 1 of D1, rank 0 of D2, then strangers. */
        private final DatagramChannel[] sockets = new DatagramChannel[5];

        private final UdpPeer fencePeer = new UdpPeer();
        private final JobSpec fenceJob;
        private final List<Target> targets = new ArrayList<>();
        private final byte[] buf = new byte[65_536];
        private final ByteBuffer drain = ByteBuffer.allocateDirect(65_536);
        final Map<Mutation, Long> applied = new EnumMap<>(Mutation.class);
        /** Fuzz datagrams sent. */
        long sent;
        /** Fence contributions sent. */
        long fenceSent;
        /** Well-formed datagrams of the set-up checks. */
        long setupSent;

        long decoyResults;
        long strangerReceived;
        private long fenceSeq;

        Fuzzer(final SoftwareSwitch sw, final SplittableRandom rnd) throws IOException {
            this.sw = sw;
            this.rnd = rnd;
            this.lanes = sw.address().laneAddresses();
            for (int i = 0; i < sockets.length; i++) {
                sockets[i] = DatagramChannel.open();
                sockets[i].bind(new InetSocketAddress("127.0.0.1", 0));
                sockets[i].configureBlocking(false);
            }
            // One worker, one slot per lane: packet g goes to lane g mod LANES and completes at once.
            fenceJob = new JobSpec(0xFE, 0, 1, LANES, List.of(fencePeer.address()));
            sw.registerJob(fenceJob);
        }

        void target(final Target t) {
            targets.add(t);
        }

        /** Two jobs whose workers are the fuzzer's sockets, so mutated packets reach the slot algorithm. */
        void decoys() throws IOException {
            final JobSpec d1 = new JobSpec(0xD1, 5, 8, 4, List.of(address(0), address(1)));
            final JobSpec d2 = new JobSpec(0xD2, 0, 3, 3, List.of(address(2)));
            sw.registerJob(d1);
            sw.registerJob(d2);
            targets.add(new Target(d1, new DatagramChannel[] {sockets[0], sockets[1]}));
            targets.add(new Target(d2, new DatagramChannel[] {sockets[2]}));
        }

        private InetSocketAddress address(final int i) throws IOException {
            return (InetSocketAddress) sockets[i].getLocalAddress();
        }

        /**
         * Well-formed, in-order packets of the one-worker decoy across the 2^32 wrap of seq: each completes
         * its slot at once, so each must come back as a RESULT with its own payload.
         */
        void seqWrapsAroundCleanly() throws IOException {
            final Target d2 = targets.get(targets.size() - 1);
            final JobSpec s = d2.spec();
            for (long g = (1L << 32) - 7; g < (1L << 32) + 7; g++) {
                final int len = wellFormed(s, 0, g, (int) g);
                send(d2.sockets()[0], len, lanes.get(Wire.slotOf(g, s.poolSize()) % LANES));
                setupSent++;
                final byte[] got = receive(d2.sockets()[0]);
                assertNotNull(got, "no result for g = " + g + " (seq " + Integer.toUnsignedString((int) g) + ")");
                final ByteBuffer r = ByteBuffer.wrap(got).order(ByteOrder.BIG_ENDIAN);
                assertEquals(Kind.RESULT.code(), r.get(0) & 0x0F, "g = " + g);
                assertEquals((int) g, r.getInt(Wire.SEQ_OFFSET));
                assertEquals(s.secret(), r.getInt(Wire.SECRET_OFFSET), "results carry the secret");
                assertEquals((int) g, r.getInt(Wire.PAYLOAD_OFFSET));
            }
        }

        private byte[] receive(final DatagramChannel ch) throws IOException {
            final long deadline = System.nanoTime() + WAIT_MS * 1_000_000L;
            while (System.nanoTime() < deadline) {
                drain.clear();
                if (ch.receive(drain) != null) {
                    drain.flip();
                    final byte[] out = new byte[drain.remaining()];
                    drain.get(out);
                    return out;
                }
                Thread.onSpinWait();
            }
            return null;
        }

        /** Writes a well-formed contribution of packet g of {@code rank} into buf; returns its length. */
        private int wellFormed(final JobSpec s, final int rank, final long g, final int fill) {
            final ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.BIG_ENDIAN);
            b.put(0, (byte) ((Wire.VERSION << 4) | Kind.CONTRIBUTION.code()));
            b.put(1, (byte) ((Wire.setOf(g, s.poolSize()) << 7) | rnd.nextInt(3)));
            b.putShort(Wire.K_OFFSET, (short) s.k());
            b.putInt(Wire.JOB_ID_OFFSET, s.jobId());
            b.putShort(Wire.GENERATION_OFFSET, (short) s.generation());
            b.put(Wire.RANK_OFFSET, (byte) rank);
            b.put(Wire.RANK_OFFSET + 1, (byte) 0);
            b.putShort(Wire.SLOT_OFFSET, (short) Wire.slotOf(g, s.poolSize()));
            b.putShort(
                    Wire.EXPONENT_OFFSET, rnd.nextInt(4) == 0 ? Wire.EXPONENT_NONE : (short) (rnd.nextInt(200) - 100));
            b.putInt(Wire.SEQ_OFFSET, (int) g);
            b.putInt(Wire.SECRET_OFFSET, s.secret());
            for (int i = 0; i < s.k(); i++) {
                b.putInt(Wire.PAYLOAD_OFFSET + 4 * i, fill == Integer.MIN_VALUE ? rnd.nextInt() : fill);
            }
            return Wire.datagramLength(s.k());
        }

        private void send(final DatagramChannel from, final int len, final InetSocketAddress to) throws IOException {
            final int n = from.send(ByteBuffer.wrap(buf, 0, len), to);
            if (n != len) {
                throw new IOException("datagram of " + len + " bytes not sent (" + n + ")");
            }
        }

        private void count(final Mutation m) {
            applied.merge(m, 1L, Long::sum);
        }

        void run(final long datagrams) throws IOException {
            int lastLen = -1;
            DatagramChannel lastFrom = null;
            InetSocketAddress lastTo = null;
            while (sent < datagrams) {
                for (int i = 0; i < BATCH && sent < datagrams; i++) {
                    if (lastLen >= 0 && rnd.nextInt(50) == 0) {
                        count(Mutation.DUPLICATE);
                        send(lastFrom, lastLen, lastTo);
                        sent++;
                        continue;
                    }
                    final Target t = targets.get(rnd.nextInt(targets.size()));
                    final JobSpec s = t.spec();
                    final int pool = s.poolSize();
                    final long g;
                    if (rnd.nextInt(8) == 0) {
                        count(Mutation.SEQ_WRAP);
                        g = (1L << 32) - 2L * pool + rnd.nextInt(4 * pool);
                    } else {
                        g = rnd.nextInt(6 * pool);
                    }
                    final int rank = rnd.nextInt(s.numWorkers());
                    int len = wellFormed(s, rank, g, Integer.MIN_VALUE);
                    DatagramChannel from = t.sockets() != null ? t.sockets()[rank] : sockets[3 + rnd.nextInt(2)];
                    InetSocketAddress to = lanes.get(Wire.slotOf(g, pool) % LANES);
                    final int mutations = rnd.nextInt(10) < 2 ? 0 : 1 + rnd.nextInt(3);
                    for (int m = 0; m < mutations; m++) {
                        final Mutation what = Mutation.values()[rnd.nextInt(Mutation.values().length)];
                        switch (what) {
                            case WRONG_LANE -> to = lanes.get(rnd.nextInt(LANES));
                            case WRONG_SOURCE -> from = sockets[rnd.nextInt(sockets.length)];
                            case DUPLICATE, SEQ_WRAP -> {
                                continue; // applied above, per datagram
                            }
                            default -> len = mutate(what, len);
                        }
                        count(what);
                    }
                    send(from, len, to);
                    sent++;
                    lastLen = len;
                    lastFrom = from;
                    lastTo = to;
                }
                fence();
            }
        }

        /** Applies one header, length or payload mutation to buf[0..len); returns the new length. */
        private int mutate(final Mutation m, final int len) {
            final ByteBuffer b = ByteBuffer.wrap(buf).order(ByteOrder.BIG_ENDIAN);
            final boolean header = len >= Wire.HEADER_LENGTH;
            switch (m) {
                case VERSION -> buf[0] = (byte) ((rnd.nextInt(16) << 4) | (buf[0] & 0x0F));
                case KIND -> buf[0] = (byte) ((buf[0] & 0xF0) | rnd.nextInt(16));
                case SET -> buf[1] ^= (byte) 0x80;
                case FLAG_RESERVED -> buf[1] = (byte) ((buf[1] & 0x8F) | (rnd.nextInt(8) << 4));
                case ENCODING -> buf[1] = (byte) ((buf[1] & 0xF0) | rnd.nextInt(16));
                case K_FIELD -> {
                    if (len >= 4) {
                        b.putShort(Wire.K_OFFSET, (short) rnd.nextInt(1 << 16));
                    }
                }
                case K_CONSISTENT -> {
                    // Another k with a matching length: well-formed, but not the job's k.
                    final int k = 1 + rnd.nextInt(70);
                    b.putShort(Wire.K_OFFSET, (short) k);
                    for (int i = len; i < Wire.datagramLength(k); i++) {
                        buf[i] = (byte) rnd.nextInt();
                    }
                    return Wire.datagramLength(k);
                }
                case JOB_ID -> {
                    if (header) {
                        final int pick = rnd.nextInt(3);
                        b.putInt(
                                Wire.JOB_ID_OFFSET,
                                pick == 0
                                        ? rnd.nextInt()
                                        : targets.get(rnd.nextInt(targets.size()))
                                                        .spec()
                                                        .jobId()
                                                + (pick == 1 ? 0 : 1));
                    }
                }
                case GENERATION -> {
                    if (header) {
                        final int gen = b.getShort(Wire.GENERATION_OFFSET) & 0xFFFF;
                        b.putShort(Wire.GENERATION_OFFSET, (short)
                                (rnd.nextBoolean() ? gen + 1 - 2 * rnd.nextInt(2) : rnd.nextInt(1 << 16)));
                    }
                }
                case RANK -> {
                    if (header) {
                        buf[Wire.RANK_OFFSET] = (byte) (rnd.nextBoolean() ? rnd.nextInt(4) : rnd.nextInt(256));
                    }
                }
                case RANK_RESERVED -> {
                    if (header) {
                        buf[Wire.RANK_OFFSET + 1] = (byte) rnd.nextInt(256);
                    }
                }
                case SLOT -> {
                    if (header) {
                        final int slot = b.getShort(Wire.SLOT_OFFSET) & 0xFFFF;
                        b.putShort(Wire.SLOT_OFFSET, (short)
                                switch (rnd.nextInt(3)) {
                                    case 0 -> slot + 1;
                                    case 1 -> 1 + rnd.nextInt(70);
                                    default -> rnd.nextInt(1 << 16);
                                });
                    }
                }
                case EXPONENT -> {
                    if (header) {
                        b.putShort(Wire.EXPONENT_OFFSET, (short) rnd.nextInt(1 << 16));
                    }
                }
                case SEQ -> {
                    if (header) {
                        final int seq = b.getInt(Wire.SEQ_OFFSET);
                        b.putInt(
                                Wire.SEQ_OFFSET,
                                switch (rnd.nextInt(4)) {
                                    case 0 -> seq - 1 - rnd.nextInt(20);
                                    case 1 -> seq + 1 + rnd.nextInt(20);
                                    case 2 -> Integer.MIN_VALUE + rnd.nextInt(8) - 4;
                                    default -> rnd.nextInt();
                                });
                    }
                }
                case SECRET -> {
                    if (header) {
                        final int secret = b.getInt(Wire.SECRET_OFFSET);
                        b.putInt(
                                Wire.SECRET_OFFSET,
                                switch (rnd.nextInt(4)) {
                                    case 0 -> secret ^ (1 << rnd.nextInt(32));
                                    case 1 ->
                                        targets.get(rnd.nextInt(targets.size()))
                                                .spec()
                                                .secret();
                                    case 2 -> 0;
                                    default -> rnd.nextInt();
                                });
                    }
                }
                case TRUNCATE -> {
                    return len == 0 ? 0 : rnd.nextInt(rnd.nextBoolean() ? Math.min(len, Wire.HEADER_LENGTH + 1) : len);
                }
                case EXTEND -> {
                    final int room = Transports.MAX_DATAGRAM - len;
                    if (room <= 0) {
                        return len;
                    }
                    // Now and then up to the largest datagram.
                    final int extra = 1 + rnd.nextInt(rnd.nextInt(64) == 0 ? room : Math.min(64, room));
                    for (int i = len; i < len + extra; i++) {
                        buf[i] = (byte) rnd.nextInt();
                    }
                    return len + extra;
                }
                case PAYLOAD -> {
                    for (int i = Wire.PAYLOAD_OFFSET; i < len; i++) {
                        buf[i] = (byte) rnd.nextInt();
                    }
                }
                case RANDOM_BYTES -> {
                    final int n = rnd.nextInt(rnd.nextInt(16) == 0 ? 2_000 : 64);
                    for (int i = 0; i < n; i++) {
                        buf[i] = (byte) rnd.nextInt();
                    }
                    return n;
                }
                default -> throw new IllegalStateException(m.toString());
            }
            return len;
        }

        /**
         * A round trip through the fence job on every lane: each lane handles its datagrams in order, so
         * its result proves everything sent before it was handled. Also drains what the switch sent to the
         * decoys' sockets.
         */
        void fence() throws IOException {
            final long first = fenceSeq;
            for (int l = 0; l < LANES; l++) {
                final long g = fenceSeq++;
                fencePeer.send(
                        UdpPeer.contribution(
                                fenceJob.jobId(),
                                fenceJob.generation(),
                                fenceJob.secret(),
                                0,
                                (int) g,
                                fenceJob.poolSize(),
                                new int[] {(int) g}),
                        lanes.get(Wire.slotOf(g, LANES)));
                fenceSent++;
            }
            final boolean[] got = new boolean[LANES];
            for (int seen = 0; seen < LANES; ) {
                final byte[] r = fencePeer.receive(WAIT_MS);
                assertNotNull(r, "fence result did not arrive: is the switch up?");
                final long seq = ByteBuffer.wrap(r).getInt(Wire.SEQ_OFFSET) & 0xFFFF_FFFFL;
                final int i = (int) (seq - first);
                if (i >= 0 && i < LANES && !got[i]) {
                    got[i] = true;
                    seen++;
                }
            }
            for (int i = 0; i < sockets.length; i++) {
                while (true) {
                    drain.clear();
                    if (sockets[i].receive(drain) == null) {
                        break;
                    }
                    if (i < 3) {
                        decoyResults++;
                    } else {
                        strangerReceived++;
                    }
                }
            }
        }

        @Override
        public void close() throws IOException {
            fencePeer.close();
            for (final DatagramChannel c : sockets) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }
}

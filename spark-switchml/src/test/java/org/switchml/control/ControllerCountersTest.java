package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.UdpPeer;

/** Counters read over P4Runtime after real traffic: an allreduce, then bad packets of every kind. */
class ControllerCountersTest {
    private static final long WAIT_MS = 10_000;
    private static ControlTestBed bed;

    @BeforeAll
    static void start() {
        // One lane: datagrams from every socket are handled in arrival order, so a result proves that
        // everything sent before its trigger was handled (no sleeping to let the switch catch up).
        bed = ControlTestBed.start(1);
    }

    @AfterAll
    static void stop() {
        bed.close();
    }

    @Test
    void anAllreduceCountsEveryPacketInAndEveryResultOut() {
        final int n = 3;
        final int k = 64;
        final int length = 64 * 50 + 7; // 51 packets per worker, INT32 (no look-ahead)
        final int packets = (length + k - 1) / k;
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("counters allreduce", 31));
        // Long retransmission timeouts: on a quiet loopback nothing is lost, so the counts are exact.
        final ClientOptions options = ClientOptions.defaults().withRetransmitTimeoutsMs(10_000, 10_000, 10_000);
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            clients.add(SwitchMLClient.open(options));
            endpoints.add(clients.get(r).localAddress());
        }
        try {
            final SwitchCounters before = bed.controller.readSwitchCounters();
            final JobSpec spec = bed.controller
                    .registerJob(new JobSpec(11, 1, k, 8, endpoints))
                    .spec();
            final List<JobSession> sessions = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                sessions.add(clients.get(r).join(spec, r, bed.sw.address()));
            }
            final int[][] in = new int[n][];
            final int[] expected = new int[length];
            for (int r = 0; r < n; r++) {
                in[r] = rnd.ints(length).toArray();
                for (int i = 0; i < length; i++) {
                    expected[i] += in[r][i];
                }
            }
            final List<int[]> out = TestCluster.parallel(n, r -> sessions.get(r).allReduce(in[r]));
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected, out.get(r), "rank " + r);
            }
            final JobCounters c = bed.controller.readJobCounters(11);
            assertEquals(0, c.retransmissions(), "no retransmission expected on loopback: " + c);
            assertEquals((long) n * packets, c.packetsIn(), "packets in: " + c);
            assertEquals((long) n * packets, c.packetsOut(), "one result per worker per packet: " + c);
            assertEquals(0, c.totalDrops(), c.toString());
            assertEquals(before, bed.controller.readSwitchCounters(), "no switch-wide drops");
            bed.controller.removeJob(11);
        } finally {
            for (final SwitchMLClient cl : clients) {
                cl.close();
            }
        }
    }

    @Test
    void badPacketsShowUpAsDropsByReason() {
        final int job = 21;
        final int gen = 4;
        final int k = 8;
        final int pool = 2;
        try (UdpPeer a = new UdpPeer();
                UdpPeer b = new UdpPeer();
                UdpPeer stranger = new UdpPeer()) {
            final SwitchCounters before = bed.controller.readSwitchCounters();
            final int secret = bed.controller
                    .registerJob(new JobSpec(job, gen, k, pool, List.of(a.address(), b.address())))
                    .spec()
                    .secret();
            final InetSocketAddress lane = bed.sw.address().laneAddresses().get(0);
            final int[] v = new int[k];
            Arrays.fill(v, 5);

            a.send(new byte[12], lane); // MALFORMED
            a.send(UdpPeer.contribution(999, gen, secret, 0, 0, pool, v), lane); // UNKNOWN_JOB
            a.send(UdpPeer.contribution(job, gen, ~secret, 0, 0, pool, v), lane); // BAD_SECRET
            stranger.send(UdpPeer.contribution(job, gen + 1, secret ^ 1, 0, 0, pool, v), lane); // BAD_SECRET
            a.send(UdpPeer.contribution(job, gen + 1, secret, 0, 0, pool, v), lane); // STALE_GENERATION
            a.send(UdpPeer.contribution(job, gen, secret, 1, 0, pool, v), lane); // UNKNOWN_SENDER
            stranger.send(UdpPeer.contribution(job, gen, secret, 0, 0, pool, v), lane); // UNKNOWN_SENDER
            a.send(UdpPeer.contribution(job, gen, secret, 0, 0, pool, new int[k / 2]), lane); // WRONG_K
            a.send(UdpPeer.datagram(1, 0, k, job, gen, 0, pool, -32768, 0, secret, v), lane); // BAD_SLOT
            a.send(UdpPeer.contribution(job, gen, secret, 0, 1, pool, v), lane); // g=1: consumed
            a.send(UdpPeer.contribution(job, gen, secret, 0, 1, pool, v), lane); // DUPLICATE_PENDING
            b.send(UdpPeer.contribution(job, gen, secret, 1, 1, pool, v), lane); // completes g=1
            assertNotNull(a.receive(WAIT_MS), "rank 0 gets the result of g=1");
            assertNotNull(b.receive(WAIT_MS), "rank 1 gets the result of g=1");

            final JobCounters c = bed.controller.readJobCounters(job);
            assertEquals(2, c.drops(DropReason.BAD_SECRET), c.toString());
            assertEquals(1, c.drops(DropReason.STALE_GENERATION), c.toString());
            assertEquals(2, c.drops(DropReason.UNKNOWN_SENDER), c.toString());
            assertEquals(1, c.drops(DropReason.WRONG_K), c.toString());
            assertEquals(1, c.drops(DropReason.BAD_SLOT), c.toString());
            assertEquals(1, c.drops(DropReason.DUPLICATE_PENDING), c.toString());
            assertEquals(0, c.drops(DropReason.STALE_SEQ), c.toString());
            assertEquals(1, c.retransmissions(), c.toString());
            assertEquals(2, c.packetsOut(), c.toString());
            // The P4 meaning: every well-formed packet of the known job that carries its secret, dropped at
            // steps 4-7 or not (a packet without the secret is not counted in).
            assertEquals(5 + 3, c.packetsIn(), c.toString());

            final SwitchCounters s = bed.controller.readSwitchCounters();
            assertEquals(1, s.drops(DropReason.MALFORMED) - before.drops(DropReason.MALFORMED));
            assertEquals(1, s.drops(DropReason.UNKNOWN_JOB) - before.drops(DropReason.UNKNOWN_JOB));
            assertEquals(2, s.drops(DropReason.BAD_SECRET) - before.drops(DropReason.BAD_SECRET));
            assertEquals(2, s.drops(DropReason.UNKNOWN_SENDER) - before.drops(DropReason.UNKNOWN_SENDER));
            assertEquals(1, s.drops(DropReason.DUPLICATE_PENDING) - before.drops(DropReason.DUPLICATE_PENDING));
            assertEquals(0, s.notSwitchml());

            // Counters outlive the job, as on the P4 switch; after removal the job is unknown.
            bed.controller.removeJob(job);
            a.send(UdpPeer.contribution(job, gen, secret, 0, 2, pool, v), lane);
            final long[] dropReason = bed.controller.readCounter(P4Names.DROP_REASON);
            assertEquals(
                    2,
                    dropReason[DropReason.UNKNOWN_SENDER.ordinal()] - before.drops(DropReason.UNKNOWN_SENDER),
                    "removed job's drops still counted");
        }
    }
}

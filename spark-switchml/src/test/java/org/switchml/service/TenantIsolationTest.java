package org.switchml.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.JobSpec;
import org.switchml.service.standalone.SwitchMain;
import org.switchml.service.v1.CreateJobRequest;
import org.switchml.service.v1.Endpoint;
import org.switchml.service.v1.JobServiceGrpc;
import org.switchml.testing.PrivateFiles;
import org.switchml.testing.Seeds;

/**
 * One switch, four tenants, default quotas. Three ordinary tenants drive real allreduces through the standalone
 * software switch, job after job, while a fourth asks for every slot, then for 128 sessions, then for a job of
 * 256 workers named by host name, then for as many jobs of the largest size as it may. The three finish every
 * call exactly, with no request refused; the fourth is refused each time with the quota (or rule) named, never
 * with another tenant's name, and no more than its share of the switch.
 */
@Timeout(300)
class TenantIsolationTest {
    private static final int TENANTS = 3;
    private static final int ROUNDS = 8;
    private static final int CALLS = 3;
    private static final int WORKERS = 2;
    /** Jobs each ordinary tenant runs once the greedy tenant holds all it could get. */
    private static final int AFTER = 3;

    @TempDir
    Path dir;

    @Test
    void threeTenantsFinishExactlyWhileAFourthIsRefusedByItsQuotas() throws Exception {
        final long seed = Seeds.seed("tenant isolation", 37);
        final String[] tokens = {
            "tenant-zero-token-0123456789",
            "tenant-one-token-0123456789",
            "tenant-two-token-0123456789",
            "greedy-token-0123456789"
        };
        final Path tokenFile =
                PrivateFiles.write(dir.resolve("tokens"), "# one line per tenant\n" + String.join("\n", tokens) + "\n");
        try (SwitchMain.Running sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "2",
                "--service-port",
                "0",
                "--token-file",
                tokenFile.toString())) {
            final ExecutorService pool = Executors.newCachedThreadPool();
            final AtomicInteger refused = new AtomicInteger();
            final AtomicInteger exact = new AtomicInteger();
            final AtomicInteger calls = new AtomicInteger();
            final AtomicBoolean greedyDone = new AtomicBoolean();
            final List<String> names = new ArrayList<>();
            final List<Future<?>> tenants = new ArrayList<>();
            final CountDownLatch started = new CountDownLatch(TENANTS);
            try (JobServiceClient greedy = client(sw, BearerToken.of(tokens[3]))) {
                for (int t = 0; t < TENANTS; t++) {
                    final String name = "tenant-" + t + "-app";
                    names.add(name);
                    final BearerToken token = BearerToken.of(tokens[t]);
                    final SplittableRandom rnd = new SplittableRandom(seed + t);
                    tenants.add(pool.submit(() -> {
                        runTenant(sw, token, name, rnd, pool, refused, exact, calls, started, greedyDone);
                        return null;
                    }));
                }
                assertTrue(started.await(60, TimeUnit.SECONDS), "the tenants did not start");
                final List<JobDesk.Grant> held = new ArrayList<>();
                final List<String> toGreedy = greedy(sw, greedy, BearerToken.of(tokens[3]), held);
                greedyDone.set(true);
                // The greedy tenant keeps what it got while the others go on.
                final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
                while (!tenants.stream().allMatch(Future::isDone)) {
                    assertTrue(System.nanoTime() < end, "the tenants did not finish within 180 s");
                    for (final JobDesk.Grant g : held) {
                        greedy.renew(g.sessionId());
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300)); // renewal pace, not a sync
                }
                for (final Future<?> f : tenants) {
                    f.get();
                }
                for (final String m : toGreedy) {
                    for (final String n : names) {
                        assertFalse(m.contains(n), "the greedy tenant was told another tenant's name: " + m);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.println("[tenants] seed " + seed + ": " + exact.get() + " of " + calls.get() + " allreduces "
                    + "exact, " + refused.get() + " of the ordinary tenants' requests refused; switch "
                    + sw.jobs().desk().occupancy());
            assertEquals(0, refused.get(), "an ordinary tenant's request was refused");
            assertEquals(calls.get(), exact.get());
            assertTrue(exact.get() >= TENANTS * ROUNDS * CALLS, exact.get() + " calls");
        }
    }

    /**
     * One ordinary tenant: a session, and job after job of two workers, each call checked exactly; at least
     * {@link #ROUNDS} jobs, and {@link #AFTER} more once the greedy tenant got all it could.
     */
    private static void runTenant(
            final SwitchMain.Running sw,
            final BearerToken token,
            final String name,
            final SplittableRandom rnd,
            final ExecutorService pool,
            final AtomicInteger refused,
            final AtomicInteger exact,
            final AtomicInteger calls,
            final CountDownLatch started,
            final AtomicBoolean greedyDone)
            throws Exception {
        final List<SwitchMLClient> workers = new ArrayList<>();
        try (LeasedSession session = new LeasedSession(client(sw, token), name)) {
            for (int r = 0; r < WORKERS; r++) {
                workers.add(SwitchMLClient.open(ClientOptions.defaults()));
            }
            final List<InetSocketAddress> endpoints =
                    workers.stream().map(SwitchMLClient::localAddress).toList();
            started.countDown();
            int after = 0;
            for (int round = 0; (round < ROUNDS || after < AFTER) && round < 10_000; round++) {
                if (greedyDone.get()) {
                    after++;
                }
                final JobSpec spec;
                try {
                    spec = session.create(
                            new JobSpec(session.grant().jobIdBase() + round, round & 0xFFFF, 0, 64, 32, endpoints), 0);
                } catch (final JobServiceException e) {
                    refused.incrementAndGet();
                    System.out.println("[tenants] " + name + " refused: " + e.getMessage());
                    continue;
                }
                final List<JobSession> ranks = new ArrayList<>();
                for (int r = 0; r < WORKERS; r++) {
                    ranks.add(workers.get(r).join(spec, r, sw.sw().address()));
                }
                for (int call = 0; call < CALLS; call++) {
                    calls.incrementAndGet();
                    final int[][] in = new int[WORKERS][];
                    final int[] sum = new int[500 + rnd.nextInt(3000)];
                    for (int r = 0; r < WORKERS; r++) {
                        in[r] = rnd.ints(sum.length, -100_000, 100_000).toArray();
                        for (int i = 0; i < sum.length; i++) {
                            sum[i] += in[r][i];
                        }
                    }
                    final List<Future<int[]>> out = new ArrayList<>();
                    for (int r = 0; r < WORKERS; r++) {
                        final int rank = r;
                        out.add(pool.submit(() -> ranks.get(rank).allReduce(in[rank])));
                    }
                    for (final Future<int[]> f : out) {
                        assertArrayEquals(sum, f.get(60, TimeUnit.SECONDS), name + " round " + round);
                    }
                    exact.incrementAndGet();
                }
                assertTrue(session.remove(spec.jobId()));
            }
            assertTrue(session.lostReason() == null, session.lostReason());
        } finally {
            for (final SwitchMLClient w : workers) {
                w.close();
            }
        }
    }

    /** The greedy tenant's requests, each refused; returns every message it was told. */
    private static List<String> greedy(
            final SwitchMain.Running sw,
            final JobServiceClient c,
            final BearerToken token,
            final List<JobDesk.Grant> sessions)
            throws Exception {
        final List<String> told = new ArrayList<>();
        {
            final JobDesk.Grant g = c.open("greedy-app");
            sessions.add(g);
            final Quotas q = g.quotas();
            // Every slot, in one job.
            final JobServiceException all = assertThrows(
                    JobServiceException.class,
                    () -> c.create(
                            g.sessionId(),
                            new JobSpec(
                                    g.jobIdBase(),
                                    0,
                                    0,
                                    64,
                                    g.switchDescription().poolSlots(),
                                    List.of(new InetSocketAddress("127.0.0.1", 48000))),
                            0));
            assertEquals(JobServiceException.Kind.OVER_QUOTA, all.kind(), all.getMessage());
            assertTrue(all.getMessage().contains("quota of slots per job (" + q.slotsPerJob()), all.getMessage());
            told.add(all.getMessage());
            // 128 sessions.
            JobServiceException tooMany = null;
            for (int i = 1; i < 128 && tooMany == null; i++) {
                try {
                    sessions.add(c.open("greedy-app-" + i));
                } catch (final JobServiceException e) {
                    tooMany = e;
                }
            }
            assertTrue(tooMany != null, "128 sessions were opened");
            assertEquals(JobServiceException.Kind.OVER_QUOTA, tooMany.kind(), tooMany.getMessage());
            assertTrue(
                    tooMany.getMessage().contains("quota of sessions per token (" + q.sessionsPerToken()),
                    tooMany.getMessage());
            assertEquals(q.sessionsPerToken(), sessions.size());
            told.add(tooMany.getMessage());
            // 256 workers named by host name, sent as the wire allows: refused before any name is looked up.
            final ManagedChannel raw = Grpc.newChannelBuilderForAddress(
                            "127.0.0.1",
                            sw.jobs().port(),
                            TlsFiles.client("", "", "", token, "127.0.0.1", "the job service"))
                    .build();
            try {
                final CreateJobRequest.Builder b = CreateJobRequest.newBuilder()
                        .setSessionId(g.sessionId())
                        .setJobId(g.jobIdBase() + 1)
                        .setK(64)
                        .setPoolSize(8);
                for (int r = 0; r < 256; r++) {
                    b.addWorkers(Endpoint.newBuilder()
                            .setHost(String.format("worker-%03d.rack.example", r))
                            .setPort(48000));
                }
                final long t0 = System.nanoTime();
                final StatusRuntimeException named = assertThrows(
                        StatusRuntimeException.class,
                        () -> JobServiceGrpc.newBlockingStub(raw)
                                .withDeadlineAfter(10, TimeUnit.SECONDS)
                                .createJob(b.build()));
                final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertEquals(
                        Status.Code.INVALID_ARGUMENT,
                        named.getStatus().getCode(),
                        named.getStatus().toString());
                assertTrue(
                        named.getStatus()
                                .getDescription()
                                .contains("rank 0: 'worker-000.rack.example' is not an " + "IPv4 address literal"),
                        named.getStatus().getDescription());
                told.add(named.getStatus().getDescription());
                System.out.println("[tenants] 256 workers by host name refused in " + ms + " ms");
            } finally {
                raw.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            // As many jobs of the largest size as it may: no more than its token's share of the switch.
            int held = 0;
            JobServiceException share = null;
            for (int s = 0; s < sessions.size() && share == null; s++) {
                for (int j = 0; j < q.jobsPerSession() && share == null; j++) {
                    try {
                        c.create(
                                sessions.get(s).sessionId(),
                                new JobSpec(
                                        sessions.get(s).jobIdBase() + 100 + j,
                                        0,
                                        0,
                                        64,
                                        q.slotsPerJob(),
                                        List.of(new InetSocketAddress("127.0.0.1", 49000 + held))),
                                0);
                        held++;
                    } catch (final JobServiceException e) {
                        share = e;
                    }
                }
            }
            assertTrue(share != null, "the greedy tenant was never stopped");
            assertEquals(JobServiceException.Kind.OVER_QUOTA, share.kind(), share.getMessage());
            assertTrue(
                    share.getMessage().contains("one token's share of the switch (" + q.tokenSharePercent() + " %"),
                    share.getMessage());
            assertTrue(
                    (long) held * q.slotsPerJob()
                            <= (long) g.switchDescription().poolSlots() * q.tokenSharePercent() / 100,
                    held + " jobs of " + q.slotsPerJob() + " slots");
            told.add(share.getMessage());
            System.out.println("[tenants] the greedy tenant holds " + held + " jobs of " + q.slotsPerJob()
                    + " slots and " + sessions.size() + " sessions; told: " + told);
        }
        return told;
    }

    private static JobServiceClient client(final SwitchMain.Running sw, final BearerToken token) {
        return JobServiceClient.connect(
                "127.0.0.1", sw.jobs().port(), TlsFiles.client("", "", "", token, "127.0.0.1", "the job service"));
    }
}

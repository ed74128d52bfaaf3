package org.switchml.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.client.ClientOptions;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.JobSpec;
import org.switchml.service.standalone.SwitchMain;
import org.switchml.testing.Seeds;

/**
 * The job service of a standalone switch, through its gRPC door: only token holders get in, a session sees and
 * changes only its own jobs, a lapsed lease takes its jobs within 2.6 renewal intervals, a request over a quota is
 * refused at once naming the quota, and a full switch admits what fits without letting a large request be
 * overtaken forever.
 */
@Timeout(180)
class JobServiceTest {
    /** The lease test's switch; the others renew rarely enough that their sessions outlive them. */
    private static final long RENEW_MS = 1_000;

    @TempDir
    static Path dir;

    private static SwitchMain.Running sw;
    private static BearerToken token;

    @BeforeAll
    static void start() {
        sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "2",
                "--service-port",
                "0",
                "--token-file",
                dir.resolve("token").toString(),
                "--renew-interval-ms",
                "60000",
                "--admission-timeout-ms",
                "20000");
        token = BearerToken.read(sw.tokenFile());
    }

    @AfterAll
    static void stop() {
        sw.close();
    }

    private static SwitchMain.Running startSwitch(final String... extra) {
        final List<String> args = new ArrayList<>(List.of(
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                sw.tokenFile().toString()));
        args.addAll(List.of(extra));
        if (!args.contains("--renew-interval-ms")) {
            args.addAll(List.of("--renew-interval-ms", "60000"));
        }
        return SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), args.toArray(new String[0]));
    }

    private static JobServiceClient client(final BearerToken t) {
        return client(sw, t);
    }

    private static JobServiceClient client(final SwitchMain.Running on, final BearerToken t) {
        return JobServiceClient.connect(
                "127.0.0.1", on.jobs().port(), TlsFiles.client("", "", "", t, "127.0.0.1", "the job service"));
    }

    private static JobSpec job(final int id, final int pool, final int port) {
        return new JobSpec(id, 0, 0, 64, pool, List.of(new InetSocketAddress("127.0.0.1", port)));
    }

    @Test
    void callsWithoutTheTokenAreRefusedAndChangeNothing() {
        final Occupancy before = sw.jobs().desk().occupancy();
        try (JobServiceClient none = client(null);
                JobServiceClient wrong = client(BearerToken.of("not-the-token-0123456789"));
                JobServiceClient right = client(token)) {
            final JobServiceException a = assertThrows(JobServiceException.class, () -> none.open("intruder"));
            assertEquals(JobServiceException.Kind.NOT_AUTHENTICATED, a.kind(), a.getMessage());
            assertTrue(
                    a.getMessage().contains("UNAUTHENTICATED") && a.getMessage().contains("needs a bearer token"),
                    a.getMessage());
            final JobServiceException b = assertThrows(JobServiceException.class, () -> wrong.describe());
            assertEquals(JobServiceException.Kind.NOT_AUTHENTICATED, b.kind(), b.getMessage());
            assertTrue(b.getMessage().contains("PERMISSION_DENIED"), b.getMessage());
            // The session id is a real one: only the token keeps the wrong caller out.
            final JobDesk.Grant g = right.open("token holder");
            final JobServiceException c = assertThrows(
                    JobServiceException.class, () -> wrong.create(g.sessionId(), job(g.jobIdBase(), 4, 9), 0));
            assertEquals(JobServiceException.Kind.NOT_AUTHENTICATED, c.kind(), c.getMessage());
            assertTrue(c.getMessage().contains("refused the bearer token"), c.getMessage());
            assertEquals(before.jobs(), sw.jobs().desk().occupancy().jobs());
            // Positive control: the same request with the token gets in.
            assertEquals(
                    g.jobIdBase(),
                    right.create(g.sessionId(), job(g.jobIdBase(), 4, 9), 0).jobId());
            assertEquals(1, right.close(g.sessionId()));
        }
        assertEquals(before.jobs(), sw.jobs().desk().occupancy().jobs());
        assertEquals(before.sessions(), sw.jobs().desk().occupancy().sessions());
    }

    @Test
    void aSessionSeesAndChangesOnlyItsOwnJobs() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("job service isolation", 5));
        try (JobServiceClient c = client(token);
                SwitchMLClient worker = SwitchMLClient.open(ClientOptions.defaults())) {
            final JobDesk.Grant a = c.open("app-a");
            final JobDesk.Grant b = c.open("app-b");
            assertNotEquals(a.jobIdBase(), b.jobIdBase());
            final int port = worker.localAddress().getPort();
            final JobSpec spec = c.create(a.sessionId(), job(a.jobIdBase() + 7, 4, port), 0);
            // B cannot install A's id, read its counters, or remove it.
            final JobServiceException e = assertThrows(
                    JobServiceException.class, () -> c.create(b.sessionId(), job(a.jobIdBase() + 7, 4, port), 0));
            assertEquals(JobServiceException.Kind.REFUSED, e.kind());
            assertTrue(e.getMessage().contains("outside the job ids of this session"), e.getMessage());
            assertTrue(c.counters(b.sessionId(), spec.jobId()).isEmpty());
            assertFalse(c.remove(b.sessionId(), spec.jobId()));
            assertTrue(c.counters(a.sessionId(), spec.jobId()).isPresent());
            // A's job still aggregates with the secret only A was given.
            final int[] v = rnd.ints(300, -1000, 1000).toArray();
            assertArrayEquals(v, worker.join(spec, 0, sw.sw().address()).allReduce(v));
            final JobServiceException lost = assertThrows(JobServiceException.class, () -> c.renew("f".repeat(64)));
            assertEquals(JobServiceException.Kind.SESSION_LOST, lost.kind());
            assertEquals(1, c.close(a.sessionId()));
            assertEquals(0, c.close(b.sessionId()));
        }
    }

    @Test
    void aLapsedLeaseTakesItsJobsWithinItsBoundWhileARenewedOneLives() {
        try (SwitchMain.Running leased = startSwitch("--renew-interval-ms", Long.toString(RENEW_MS));
                JobServiceClient c = client(leased, token);
                LeasedSession live = new LeasedSession(client(leased, token), "renewing")) {
            live.create(job(live.grant().jobIdBase(), 4, 40001), 0);
            final long t0 = System.nanoTime();
            final JobDesk.Grant dead = c.open("silent");
            c.create(dead.sessionId(), job(dead.jobIdBase(), 4, 40002), 0);
            assertEquals(2, leased.jobs().desk().occupancy().jobs());
            // "silent" never renews after opening; "renewing" renews in the background every interval.
            final long removedAt = await(() -> leased.jobs().desk().occupancy().jobs() == 1, 10 * RENEW_MS);
            final long ms = TimeUnit.NANOSECONDS.toMillis(removedAt - t0);
            System.out.println("lease lapse: the silent session's job was removed " + ms + " ms after it opened "
                    + "(renewal interval " + RENEW_MS + " ms, lease " + dead.leaseMs() + " ms)");
            assertTrue(ms <= 3 * RENEW_MS, ms + " ms > 3 renewal intervals");
            assertTrue(ms >= dead.leaseMs() - 5, "removed before its lease ran out: " + ms + " ms");
            assertEquals(1, leased.jobs().desk().occupancy().leasesExpired());
            // It was the silent session that went, and the renewing one lives.
            final JobServiceException e = assertThrows(JobServiceException.class, () -> c.renew(dead.sessionId()));
            assertEquals(JobServiceException.Kind.SESSION_LOST, e.kind());
            assertNull(live.lostReason());
            c.renew(live.grant().sessionId());
        }
    }

    /** Polls {@code done} until it holds; returns when it did. Bounded by {@code limitMs}. */
    private static long await(final BooleanSupplier done, final long limitMs) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        while (System.nanoTime() < end) {
            if (done.getAsBoolean()) {
                return System.nanoTime();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
        throw new AssertionError("not within " + limitMs + " ms");
    }

    @Test
    void aRequestThatCannotFitDoesNotBlockOnesThatCanAndReservesItsRoomOnceItWaitedLongEnough() throws Exception {
        final long reserveAfterMs = 3_000;
        try (SwitchMain.Running full = startSwitch(
                        "--token-share-percent",
                        "100",
                        "--admission-timeout-ms",
                        "30000",
                        "--admission-reserve-after-ms",
                        Long.toString(reserveAfterMs));
                JobServiceClient c = client(full, token)) {
            final JobDesk.Grant big = c.open("big-app");
            final JobDesk.Grant small = c.open("small-app");
            final int slots = big.switchDescription().poolSlots();
            final int perJob = big.quotas().slotsPerJob();
            // The big application holds all slots but 8, in jobs of at most its quota.
            final List<JobSpec> held = new ArrayList<>();
            int left = slots - 8;
            for (int i = 0; left > 0; i++) {
                held.add(c.create(big.sessionId(), job(big.jobIdBase() + i, Math.min(perJob, left), 41000 + i), 0));
                left -= Math.min(perJob, left);
            }
            assertEquals(slots - 8, c.describe().slotsHeld());
            // A large request waits; a small one that fits, asked later, is admitted at once past it.
            final CompletableFuture<JobSpec> large = CompletableFuture.supplyAsync(
                    () -> c.create(small.sessionId(), job(small.jobIdBase(), 200, 42000), 30_000));
            final long largeSent = System.nanoTime();
            await(() -> c.describe().requestsWaiting() == 1 || large.isDone(), 10_000);
            assertFalse(large.isDone(), () -> "the large request ended: " + large);
            final JobSpec first = c.create(small.sessionId(), job(small.jobIdBase() + 1, 8, 42001), 5_000);
            assertFalse(large.isDone(), "the large request fits nowhere yet");
            assertTrue(c.remove(small.sessionId(), first.jobId()));
            // Once it waited past the reserve bound, the large one holds back what it needs: a small request that
            // would fit the 8 free slots now waits, and is refused when its own wait ends.
            await(
                    () -> System.nanoTime() - largeSent > TimeUnit.MILLISECONDS.toNanos(reserveAfterMs + 100),
                    reserveAfterMs + 5_000);
            final long refusedBefore = c.describe().admissionsRefused();
            final JobServiceException held8 = assertThrows(
                    JobServiceException.class,
                    () -> c.create(small.sessionId(), job(small.jobIdBase() + 2, 8, 42002), 400));
            assertEquals(JobServiceException.Kind.SWITCH_FULL, held8.kind(), held8.getMessage());
            assertTrue(
                    held8.getMessage().contains("is full") && held8.getMessage().contains("8 pool slots (0 free"),
                    held8.getMessage());
            assertFalse(held8.getMessage().contains("big-app"), "names another tenant: " + held8.getMessage());
            assertEquals(refusedBefore + 1, c.describe().admissionsRefused());
            assertFalse(large.isDone());
            // Room frees: the large request is admitted, and smaller ones fit again beside it.
            assertTrue(c.remove(big.sessionId(), held.get(0).jobId()));
            assertEquals(200, large.get(10, TimeUnit.SECONDS).poolSize());
            assertEquals(
                    8,
                    c.create(small.sessionId(), job(small.jobIdBase() + 3, 8, 42003), 5_000)
                            .poolSize());
            assertEquals(2, c.close(small.sessionId()));
            assertEquals(held.size() - 1, c.close(big.sessionId()));
        }
    }

    @Test
    void requestsOverAQuotaAreRefusedAtOnceNamingTheQuotaAndNoOtherTenant() throws Exception {
        try (SwitchMain.Running q = startSwitch(
                        "--max-sessions-per-token",
                        "2",
                        "--max-jobs-per-session",
                        "2",
                        "--max-waiters-per-session",
                        "1",
                        "--max-job-bytes",
                        "64k",
                        "--token-share-percent",
                        "100");
                JobServiceClient c = client(q, token)) {
            final JobDesk.Grant other = c.open("neighbour-app");
            final JobDesk.Grant mine = c.open("greedy-app");
            final List<String> messages = new ArrayList<>();
            // Sessions per token: the third is refused.
            final JobServiceException sessions = assertThrows(JobServiceException.class, () -> c.open("third"));
            assertEquals(JobServiceException.Kind.OVER_QUOTA, sessions.kind(), sessions.getMessage());
            assertTrue(sessions.getMessage().contains("quota of sessions per token (2"), sessions.getMessage());
            messages.add(sessions.getMessage());
            // Slots per job, and bytes per job.
            final long t0 = System.nanoTime();
            final JobServiceException slots = assertThrows(
                    JobServiceException.class,
                    () -> c.create(
                            mine.sessionId(),
                            job(mine.jobIdBase(), mine.switchDescription().poolSlots(), 43000),
                            10_000));
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 5_000, "a quota refusal waited");
            assertEquals(JobServiceException.Kind.OVER_QUOTA, slots.kind(), slots.getMessage());
            assertTrue(slots.getMessage().contains("quota of slots per job (256"), slots.getMessage());
            messages.add(slots.getMessage());
            final JobServiceException bytes = assertThrows(
                    JobServiceException.class,
                    () -> c.create(
                            mine.sessionId(),
                            new JobSpec(
                                    mine.jobIdBase(),
                                    0,
                                    0,
                                    4096,
                                    8,
                                    List.of(new InetSocketAddress("127.0.0.1", 43001))),
                            0));
            assertEquals(JobServiceException.Kind.OVER_QUOTA, bytes.kind(), bytes.getMessage());
            assertTrue(bytes.getMessage().contains("quota of bytes per job (65536"), bytes.getMessage());
            messages.add(bytes.getMessage());
            // Positive control: a job within every quota is installed.
            c.create(mine.sessionId(), job(mine.jobIdBase(), 8, 43002), 0);
            c.create(mine.sessionId(), job(mine.jobIdBase() + 1, 8, 43003), 0);
            final JobServiceException jobs = assertThrows(
                    JobServiceException.class,
                    () -> c.create(mine.sessionId(), job(mine.jobIdBase() + 2, 8, 43004), 0));
            assertEquals(JobServiceException.Kind.OVER_QUOTA, jobs.kind(), jobs.getMessage());
            assertTrue(jobs.getMessage().contains("quota of jobs per session (2"), jobs.getMessage());
            messages.add(jobs.getMessage());
            // A new generation of a held job is within the session's quota of jobs, and goes through admission.
            assertEquals(
                    1,
                    c.create(
                                    mine.sessionId(),
                                    new JobSpec(
                                            mine.jobIdBase(),
                                            1,
                                            0,
                                            64,
                                            8,
                                            List.of(new InetSocketAddress("127.0.0.1", 43002))),
                                    0)
                            .generation());
            for (final String m : messages) {
                assertFalse(m.contains("neighbour-app"), "names another tenant: " + m);
            }
            assertEquals(4, c.describe().quotaRefusals());
            assertEquals(0, c.close(other.sessionId()));
            assertEquals(2, c.close(mine.sessionId()));
        }
    }

    @Test
    void aSessionMayKeepOnlyItsQuotaOfRequestsWaiting() throws Exception {
        try (SwitchMain.Running q = startSwitch(
                        "--max-waiters-per-session",
                        "1",
                        "--token-share-percent",
                        "100",
                        "--admission-timeout-ms",
                        "30000");
                JobServiceClient c = client(q, token)) {
            final JobDesk.Grant hog = c.open("hog");
            final JobDesk.Grant waiter = c.open("waiter");
            final int perJob = hog.quotas().slotsPerJob();
            final List<JobSpec> held = new ArrayList<>();
            for (int i = 0; i < hog.switchDescription().poolSlots() / perJob; i++) {
                held.add(c.create(hog.sessionId(), job(hog.jobIdBase() + i, perJob, 44000 + i), 0));
            }
            final CompletableFuture<JobSpec> one = CompletableFuture.supplyAsync(
                    () -> c.create(waiter.sessionId(), job(waiter.jobIdBase(), 8, 44100), 30_000));
            await(() -> c.describe().requestsWaiting() == 1, 10_000);
            final JobServiceException two = assertThrows(
                    JobServiceException.class,
                    () -> c.create(waiter.sessionId(), job(waiter.jobIdBase() + 1, 8, 44101), 30_000));
            assertEquals(JobServiceException.Kind.OVER_QUOTA, two.kind(), two.getMessage());
            assertTrue(two.getMessage().contains("quota of waiters per session (1"), two.getMessage());
            assertFalse(two.getMessage().contains("hog"), two.getMessage());
            // The waiting one is served when room frees.
            assertTrue(c.remove(hog.sessionId(), held.get(0).jobId()));
            assertEquals(8, one.get(10, TimeUnit.SECONDS).poolSize());
            assertEquals(1, c.close(waiter.sessionId()));
            assertEquals(held.size() - 1, c.close(hog.sessionId()));
        }
    }

    @Test
    void oneConnectionCarriesAtMostItsQuotaOfCallsAtOnce() throws Exception {
        final int limit = JobServiceServer.MAX_CALLS_PER_CONNECTION;
        try (SwitchMain.Running q = startSwitch(
                        "--token-share-percent",
                        "100",
                        "--max-jobs-per-session",
                        "64",
                        "--max-waiters-per-session",
                        "64",
                        "--admission-timeout-ms",
                        "30000");
                JobServiceClient c = client(q, token)) {
            final JobDesk.Grant hog = c.open("hog");
            final JobDesk.Grant many = c.open("many calls");
            final int perJob = hog.quotas().slotsPerJob();
            final List<JobSpec> held = new ArrayList<>();
            for (int i = 0; i < hog.switchDescription().poolSlots() / perJob; i++) {
                held.add(c.create(hog.sessionId(), job(hog.jobIdBase() + i, perJob, 44200 + i), 0));
            }
            // One more call than a connection carries, all waiting for room, all on c's one connection.
            final ExecutorService callers = Executors.newFixedThreadPool(limit + 1);
            try {
                final List<Future<JobSpec>> calls = new ArrayList<>();
                for (int i = 0; i <= limit; i++) {
                    final int id = many.jobIdBase() + i;
                    calls.add(callers.submit(() -> c.create(many.sessionId(), job(id, 1, 44300 + id % 1000), 30_000)));
                }
                final JobDesk desk = q.jobs().desk();
                await(() -> desk.occupancy().requestsWaiting() == limit, 20_000);
                // The last call stays with the client while the connection carries its limit.
                final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
                while (System.nanoTime() < end) {
                    assertEquals(limit, desk.occupancy().requestsWaiting(), "calls on one connection at once");
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                // Room for all (asked over another connection: c's is full): every call, the one held back by the
                // connection included, completes.
                try (JobServiceClient other = client(q, token)) {
                    assertTrue(other.remove(hog.sessionId(), held.get(0).jobId()));
                }
                for (final Future<JobSpec> f : calls) {
                    assertEquals(1, f.get(20, TimeUnit.SECONDS).poolSize());
                }
            } finally {
                callers.shutdownNow();
            }
            assertEquals(limit + 1, c.close(many.sessionId()));
            assertEquals(held.size() - 1, c.close(hog.sessionId()));
        }
    }

    @Test
    void namesAreBoundedAndTheServerTakesNoOversizedRequest() {
        try (JobServiceClient c = client(token)) {
            c.close(c.open("n".repeat(JobDesk.MAX_NAME_LENGTH)).sessionId()); // at the bound: taken
            final JobServiceException tooLong =
                    assertThrows(JobServiceException.class, () -> c.open("n".repeat(JobDesk.MAX_NAME_LENGTH + 1)));
            assertEquals(JobServiceException.Kind.REFUSED, tooLong.kind(), tooLong.getMessage());
            assertTrue(tooLong.getMessage().contains("at most " + JobDesk.MAX_NAME_LENGTH), tooLong.getMessage());
            final JobServiceException control = assertThrows(JobServiceException.class, () -> c.open("forged\nline"));
            assertTrue(control.getMessage().contains("control characters"), control.getMessage());
            // A request past the server's message bound never reaches the service.
            final JobServiceException huge = assertThrows(
                    JobServiceException.class, () -> c.open("n".repeat(JobServiceServer.MAX_MESSAGE_BYTES + 1)));
            assertTrue(huge.getMessage().contains("RESOURCE_EXHAUSTED"), huge.getMessage());
        }
    }

    @Test
    void anInternalFailureIsAnsweredWithAnIdNotItsText() {
        final StatusRuntimeException s = JobServiceEndpoint.status(new IllegalStateException("secret internals 42"));
        assertEquals(io.grpc.Status.Code.INTERNAL, s.getStatus().getCode());
        assertFalse(
                s.getStatus().getDescription().contains("secret internals"),
                s.getStatus().getDescription());
        assertTrue(
                s.getStatus().getDescription().matches("internal error [0-9a-f]{12} .*"),
                s.getStatus().getDescription());
        // Positive control: the desk's own refusals keep their message.
        final StatusRuntimeException q = JobServiceEndpoint.status(
                new JobDeskException(JobDeskException.Kind.OVER_QUOTA, "over the quota of x (1)"));
        assertEquals(io.grpc.Status.Code.RESOURCE_EXHAUSTED, q.getStatus().getCode());
        assertEquals("over the quota of x (1)", q.getStatus().getDescription());
    }

    @Test
    void overTlsOnlyAClientTrustingTheServiceCertificateForItsAddressGetsInAndClientCertificatesCanBeRequired()
            throws Exception {
        final TestCertificates service = TestCertificates.make(dir, "switch", "ip:127.0.0.1,dns:switch.test");
        final TestCertificates other = TestCertificates.make(dir, "impostor", "ip:127.0.0.1,dns:impostor.test");
        final TestCertificates elsewhere = TestCertificates.make(dir, "elsewhere", "dns:elsewhere.test,ip:10.9.9.9");
        try (SwitchMain.Running tls = startSwitch(
                "--tls-cert",
                service.cert().toString(),
                "--tls-key",
                service.key().toString())) {
            final int port = tls.jobs().port();
            try (JobServiceClient good = JobServiceClient.connect(
                    "127.0.0.1", port, TlsFiles.client(service.cert().toString(), "", "", token, "127.0.0.1", "tls"))) {
                good.close(good.open("over tls").sessionId());
            }
            try (JobServiceClient plain = JobServiceClient.connect(
                            "127.0.0.1", port, TlsFiles.client("", "", "", token, "127.0.0.1", "plaintext"));
                    JobServiceClient wrongTrust = JobServiceClient.connect(
                            "127.0.0.1",
                            port,
                            TlsFiles.client(other.cert().toString(), "", "", token, "127.0.0.1", "wrong trust"))) {
                assertEquals(
                        JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> plain.open("x"))
                                .kind());
                assertEquals(
                        JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> wrongTrust.open("x"))
                                .kind());
            }
            assertEquals(0, tls.jobs().desk().occupancy().sessions());
        }
        // A certificate the client trusts, but made for another host: hostname verification refuses it.
        try (SwitchMain.Running misnamed = startSwitch(
                        "--tls-cert",
                        elsewhere.cert().toString(),
                        "--tls-key",
                        elsewhere.key().toString());
                JobServiceClient trusting = JobServiceClient.connect(
                        "127.0.0.1",
                        misnamed.jobs().port(),
                        TlsFiles.client(elsewhere.cert().toString(), "", "", token, "127.0.0.1", "misnamed"))) {
            final JobServiceException e = assertThrows(JobServiceException.class, () -> trusting.open("x"));
            assertEquals(JobServiceException.Kind.UNREACHABLE, e.kind(), e.getMessage());
            final StringBuilder chain = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
                chain.append(t).append('\n');
            }
            assertTrue(
                    chain.toString().contains("No subject alternative names matching IP address 127.0.0.1"),
                    "refused for another reason than the name:\n" + chain);
            assertEquals(0, misnamed.jobs().desk().occupancy().sessions());
        }
        // With --client-ca the service also wants the client's certificate (here the client's own, self-signed).
        final TestCertificates driver = TestCertificates.make(dir, "driver", "dns:driver.test");
        try (SwitchMain.Running mtls = startSwitch(
                "--tls-cert",
                service.cert().toString(),
                "--tls-key",
                service.key().toString(),
                "--client-ca",
                driver.cert().toString())) {
            final int port = mtls.jobs().port();
            try (JobServiceClient withCert = JobServiceClient.connect(
                    "127.0.0.1",
                    port,
                    TlsFiles.client(
                            service.cert().toString(),
                            driver.cert().toString(),
                            driver.key().toString(),
                            token,
                            "127.0.0.1",
                            "mtls"))) {
                withCert.close(withCert.open("with a client certificate").sessionId());
            }
            try (JobServiceClient noCert = JobServiceClient.connect(
                    "127.0.0.1",
                    port,
                    TlsFiles.client(service.cert().toString(), "", "", token, "127.0.0.1", "no client certificate"))) {
                assertEquals(
                        JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> noCert.open("x"))
                                .kind());
            }
            assertEquals(0, mtls.jobs().desk().occupancy().sessions());
        }
        final IllegalArgumentException beyondLoopback = assertThrows(
                IllegalArgumentException.class,
                () -> TlsFiles.client("", "", "", token, "10.1.2.3", "the job service at 10.1.2.3:9560"));
        assertTrue(beyondLoopback.getMessage().contains("TLS"), beyondLoopback.getMessage());
    }
}

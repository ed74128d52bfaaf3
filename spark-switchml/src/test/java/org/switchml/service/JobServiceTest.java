package org.switchml.service;

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

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The job service of a standalone switch, through its gRPC door: only token holders get in, a session sees and
 * changes only its own jobs, a lapsed lease takes its jobs within 2.75 renewal intervals, and a full switch
 * admits waiting requests in FIFO order or refuses them, saying what holds it.
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
        sw = SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), "--port", "0", "--lanes", "2",
                "--service-port", "0", "--token-file", dir.resolve("token").toString(),
                "--renew-interval-ms", "60000", "--admission-timeout-ms", "20000");
        token = BearerToken.read(sw.tokenFile());
    }

    @AfterAll
    static void stop() {
        sw.close();
    }

    private static JobServiceClient client(final BearerToken t) {
        return client(sw, t);
    }

    private static JobServiceClient client(final SwitchMain.Running on, final BearerToken t) {
        return JobServiceClient.connect("127.0.0.1", on.jobs().port(),
                TlsFiles.client("", "", "", t, "127.0.0.1", "the job service"));
    }

    private static JobSpec job(final int id, final int pool, final int port) {
        return new JobSpec(id, 0, 0, 64, pool, List.of(new InetSocketAddress("127.0.0.1", port)));
    }

    @Test
    void callsWithoutTheTokenAreRefusedAndChangeNothing() {
        final Occupancy before = sw.jobs().desk().occupancy();
        try (JobServiceClient none = client(null); JobServiceClient wrong = client(BearerToken.of("not-the-token-0123456789"))) {
            final JobServiceException a = assertThrows(JobServiceException.class, () -> none.open("intruder"));
            assertEquals(JobServiceException.Kind.NOT_AUTHENTICATED, a.kind(), a.getMessage());
            assertTrue(a.getMessage().contains("UNAUTHENTICATED") && a.getMessage().contains("needs a bearer token"),
                    a.getMessage());
            final JobServiceException b = assertThrows(JobServiceException.class, () -> wrong.describe());
            assertEquals(JobServiceException.Kind.NOT_AUTHENTICATED, b.kind(), b.getMessage());
            assertTrue(b.getMessage().contains("PERMISSION_DENIED"), b.getMessage());
            assertThrows(JobServiceException.class, () -> wrong.create("0".repeat(64), job(1, 4, 9), 0));
        }
        assertEquals(before, sw.jobs().desk().occupancy());
    }

    @Test
    void aSessionSeesAndChangesOnlyItsOwnJobs() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("job service isolation", 5));
        try (JobServiceClient c = client(token); SwitchMLClient worker = SwitchMLClient.open(ClientOptions.defaults())) {
            final JobDesk.Grant a = c.open("app-a");
            final JobDesk.Grant b = c.open("app-b");
            assertNotEquals(a.jobIdBase(), b.jobIdBase());
            final int port = worker.localAddress().getPort();
            final JobSpec spec = c.create(a.sessionId(), job(a.jobIdBase() + 7, 4, port), 0);
            // B cannot install A's id, read its counters, or remove it.
            final JobServiceException e = assertThrows(JobServiceException.class,
                    () -> c.create(b.sessionId(), job(a.jobIdBase() + 7, 4, port), 0));
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
    void aLapsedLeaseTakesItsJobsWithinThreeRenewalIntervals() {
        try (SwitchMain.Running leased = SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), "--port", "0",
                "--lanes", "1", "--service-port", "0", "--token-file", sw.tokenFile().toString(),
                "--renew-interval-ms", Long.toString(RENEW_MS));
             JobServiceClient c = client(leased, token)) {
            final JobDesk.Grant live = c.open("renewing");
            c.create(live.sessionId(), job(live.jobIdBase(), 4, 40001), 0);
            final long t0 = System.nanoTime();
            final JobDesk.Grant dead = c.open("silent");
            c.create(dead.sessionId(), job(dead.jobIdBase(), 4, 40002), 0);
            c.renew(live.sessionId());
            assertEquals(2, leased.jobs().desk().occupancy().jobs());
            // "silent" never renews after opening; "renewing" renews twice an interval.
            final long removedAt = awaitOrRenew(() -> leased.jobs().desk().occupancy().jobs() == 1,
                    () -> c.renew(live.sessionId()), 10 * RENEW_MS);
            final long ms = TimeUnit.NANOSECONDS.toMillis(removedAt - t0);
            System.out.println("lease lapse: the silent session's job was removed " + ms + " ms after it opened "
                    + "(renewal interval " + RENEW_MS + " ms, lease " + live.leaseMs() + " ms)");
            assertTrue(ms <= 3 * RENEW_MS, ms + " ms > 3 renewal intervals");
            assertTrue(ms >= live.leaseMs() - 5, "removed before its lease ran out: " + ms + " ms");
            assertEquals(1, leased.jobs().desk().occupancy().leasesExpired());
            // It was the silent session that went, and the renewing one lives.
            final JobServiceException e = assertThrows(JobServiceException.class, () -> c.renew(dead.sessionId()));
            assertEquals(JobServiceException.Kind.SESSION_LOST, e.kind());
            c.renew(live.sessionId());
            assertEquals(1, c.close(live.sessionId()));
        }
    }

    /** Renews every half interval until {@code done}; returns when it became true. Bounded by {@code limitMs}. */
    private static long awaitOrRenew(final BooleanSupplier done, final Runnable renew, final long limitMs) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        long nextRenew = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RENEW_MS / 2);
        while (System.nanoTime() < end) {
            if (done.getAsBoolean()) {
                return System.nanoTime();
            }
            if (System.nanoTime() > nextRenew) {
                renew.run();
                nextRenew = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RENEW_MS / 2);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
        throw new AssertionError("not within " + limitMs + " ms");
    }

    @Test
    void aFullSwitchAdmitsInFifoOrderOrRefusesNamingWhatHoldsIt() throws Exception {
        try (JobServiceClient c = client(token)) {
            final JobDesk.Grant big = c.open("big-app");
            final JobDesk.Grant small = c.open("small-app");
            final int slots = big.switchDescription().poolSlots();
            // The big application holds every slot, in two jobs: room for one small job frees at a time.
            final JobSpec most = c.create(big.sessionId(), job(big.jobIdBase(), slots - 8, 40010), 0);
            final JobSpec rest = c.create(big.sessionId(), job(big.jobIdBase() + 1, 8, 40014), 0);
            final long refusedBefore = c.describe().admissionsRefused();
            final JobServiceException e = assertThrows(JobServiceException.class,
                    () -> c.create(small.sessionId(), job(small.jobIdBase(), 8, 40011), 300));
            assertEquals(JobServiceException.Kind.SWITCH_FULL, e.kind());
            assertTrue(e.getMessage().contains("is full") && e.getMessage().contains("big-app: 2 jobs, " + slots + " slots"),
                    e.getMessage());
            assertEquals(refusedBefore + 1, c.describe().admissionsRefused());
            // Two waiting requests, the first queued first, are admitted in that order once room frees.
            final CompletableFuture<JobSpec> first = CompletableFuture.supplyAsync(
                    () -> c.create(small.sessionId(), job(small.jobIdBase() + 1, 8, 40012), 15_000));
            awaitOrRenew(() -> c.describe().requestsWaiting() == 1, () -> { }, 10_000);
            final CompletableFuture<JobSpec> second = CompletableFuture.supplyAsync(
                    () -> c.create(small.sessionId(), job(small.jobIdBase() + 2, 8, 40013), 15_000));
            awaitOrRenew(() -> c.describe().requestsWaiting() == 2, () -> { }, 10_000);
            assertFalse(first.isDone() || second.isDone());
            // Room for one: the first in the queue gets it, and the second waits on.
            assertTrue(c.remove(big.sessionId(), rest.jobId()));
            first.get(10, TimeUnit.SECONDS);
            assertEquals(1, c.describe().requestsWaiting(), "the second request must still wait");
            assertFalse(second.isDone());
            assertTrue(c.remove(big.sessionId(), most.jobId()));
            second.get(10, TimeUnit.SECONDS);
            assertEquals(2, c.close(small.sessionId()));
            assertEquals(0, c.close(big.sessionId()));
        }
    }

    @Test
    void overTlsOnlyAClientTrustingTheServiceCertificateGetsInAndClientCertificatesCanBeRequired() throws Exception {
        final TestCertificates service = TestCertificates.make(dir, "switch");
        final TestCertificates other = TestCertificates.make(dir, "impostor");
        try (SwitchMain.Running tls = SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), "--port", "0",
                "--lanes", "1", "--service-port", "0", "--token-file", sw.tokenFile().toString(),
                "--tls-cert", service.cert().toString(), "--tls-key", service.key().toString())) {
            final int port = tls.jobs().port();
            try (JobServiceClient good = JobServiceClient.connect("127.0.0.1", port, TlsFiles.client(
                    service.cert().toString(), "", "", token, "127.0.0.1", "tls"))) {
                good.close(good.open("over tls").sessionId());
            }
            try (JobServiceClient plain = JobServiceClient.connect("127.0.0.1", port, TlsFiles.client(
                    "", "", "", token, "127.0.0.1", "plaintext"));
                 JobServiceClient wrongTrust = JobServiceClient.connect("127.0.0.1", port, TlsFiles.client(
                         other.cert().toString(), "", "", token, "127.0.0.1", "wrong trust"))) {
                assertEquals(JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> plain.open("x")).kind());
                assertEquals(JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> wrongTrust.open("x")).kind());
            }
            assertEquals(0, tls.jobs().desk().occupancy().sessions());
        }
        // With --client-ca the service also wants the client's certificate (here the client's own, self-signed).
        final TestCertificates driver = TestCertificates.make(dir, "driver");
        try (SwitchMain.Running mtls = SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), "--port", "0",
                "--lanes", "1", "--service-port", "0", "--token-file", sw.tokenFile().toString(),
                "--tls-cert", service.cert().toString(), "--tls-key", service.key().toString(),
                "--client-ca", driver.cert().toString())) {
            final int port = mtls.jobs().port();
            try (JobServiceClient withCert = JobServiceClient.connect("127.0.0.1", port, TlsFiles.client(
                    service.cert().toString(), driver.cert().toString(), driver.key().toString(), token, "127.0.0.1",
                    "mtls"))) {
                withCert.close(withCert.open("with a client certificate").sessionId());
            }
            try (JobServiceClient noCert = JobServiceClient.connect("127.0.0.1", port, TlsFiles.client(
                    service.cert().toString(), "", "", token, "127.0.0.1", "no client certificate"))) {
                assertEquals(JobServiceException.Kind.UNREACHABLE,
                        assertThrows(JobServiceException.class, () -> noCert.open("x")).kind());
            }
            assertEquals(0, mtls.jobs().desk().occupancy().sessions());
        }
        final IllegalArgumentException beyondLoopback = assertThrows(IllegalArgumentException.class,
                () -> TlsFiles.client("", "", "", token, "10.1.2.3", "the job service at 10.1.2.3:9560"));
        assertTrue(beyondLoopback.getMessage().contains("TLS"), beyondLoopback.getMessage());
        assertTrue(Files.exists(service.cert()));
    }
}

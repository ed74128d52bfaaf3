package org.switchml.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.control.ControllerOptions;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.protocol.JobSpec;
import org.switchml.service.standalone.SwitchMain;
import org.switchml.testing.LatencyProxy;
import p4.v1.P4RuntimeGrpc;

/**
 * Leases under a slow switch and a slow network: a controller whose writes stall for longer than a lease, and a
 * TCP proxy that delays every renewal and then freezes the connection it travels on. In both, a session that
 * keeps renewing keeps its lease and its job, and one that stopped still lapses within its bound.
 */
@Timeout(120)
class LeaseTest {
    @TempDir
    Path dir;

    /** Holds every P4Runtime Write while closed: the switch's controller stalls as a slow switch would make it. */
    private static final class WriteGate implements ServerInterceptor {
        private volatile CountDownLatch gate = new CountDownLatch(0);

        void close() {
            gate = new CountDownLatch(1);
        }

        void open() {
            gate.countDown();
        }

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
                final ServerCall<Q, A> call, final Metadata headers, final ServerCallHandler<Q, A> next) {
            if (call.getMethodDescriptor()
                    .getFullMethodName()
                    .equals(P4RuntimeGrpc.getWriteMethod().getFullMethodName())) {
                try {
                    if (!gate.await(60, TimeUnit.SECONDS)) {
                        throw new AssertionError("the write gate stayed closed for 60 s");
                    }
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return next.startCall(call, headers);
        }
    }

    private static JobSpec job(final int id, final int port) {
        return new JobSpec(id, 0, 0, 64, 8, List.of(new InetSocketAddress("127.0.0.1", port)));
    }

    @Test
    void aControllerThatStallsLongerThanALeaseHoldsUpNoRenewal() throws Exception {
        final long renewMs = 500;
        final WriteGate gate = new WriteGate();
        final BearerToken token = BearerToken.of("lease-test-token-0123456789");
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer p4 =
                        SwitchRuntimeServer.start(sw, "127.0.0.1", 0, 0, InsecureServerCredentials.create(), gate)) {
            final SwitchController controller = SwitchController.connect(ControllerOptions.of("127.0.0.1", p4.port()));
            controller.setPipeline(PipelineConfig.softwareSwitch());
            final JobDesk desk = new JobDesk(
                    controller,
                    new SwitchDescription(
                            sw.address(),
                            0,
                            0,
                            true,
                            controller.poolSlots(),
                            controller.jobIndices(),
                            controller.maxWorkersPerJob()),
                    new JobDesk.Options(renewMs, 30_000, 2_000, Quotas.DEFAULT),
                    "the stalling switch");
            try (JobServiceServer server =
                            JobServiceServer.start(desk, "127.0.0.1", 0, InsecureServerCredentials.create(), token);
                    JobServiceClient raw = client(server.port(), token);
                    LeasedSession live = new LeasedSession(client(server.port(), token), "live");
                    LeasedSession asker = new LeasedSession(client(server.port(), token), "asker")) {
                final JobSpec liveJob = live.create(job(live.grant().jobIdBase(), 45000), 0);
                final long deadOpened = System.nanoTime();
                final JobDesk.Grant dead = raw.open("dead");
                final JobSpec deadJob = raw.create(dead.sessionId(), job(dead.jobIdBase(), 45001), 0);
                final JobDesk.Grant prober = raw.open("prober");

                // The switch stalls: a new job's install waits in it for four leases.
                gate.close();
                final long stallMs = 4 * live.grant().leaseMs();
                final long stallStart = System.nanoTime();
                final CompletableFuture<JobSpec> stalled = CompletableFuture.supplyAsync(
                        () -> asker.create(job(asker.grant().jobIdBase(), 45002), 30_000));
                try {
                    long deadLapsedAt = 0;
                    long slowestRenewMs = 0;
                    long nextRenew = System.nanoTime();
                    while (System.nanoTime() - stallStart < TimeUnit.MILLISECONDS.toNanos(stallMs)) {
                        final Occupancy o = desk.occupancy(); // the desk's lock is free whatever the switch does
                        if (deadLapsedAt == 0 && o.leasesExpired() == 1) {
                            deadLapsedAt = System.nanoTime();
                        }
                        if (System.nanoTime() - nextRenew > 0) {
                            // The prober renews by hand, timed: a renewal is answered at once during the stall.
                            final long t0 = System.nanoTime();
                            raw.renew(prober.sessionId());
                            slowestRenewMs =
                                    Math.max(slowestRenewMs, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                            nextRenew = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(renewMs);
                        }
                        assertNull(live.lostReason(), "the live session was lost while the switch stalled");
                        assertFalse(stalled.isDone(), "the install did not wait for the switch");
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                    }
                    final long lapseMs = TimeUnit.NANOSECONDS.toMillis(deadLapsedAt - deadOpened);
                    System.out.println("[lease] controller stalled " + stallMs + " ms (lease "
                            + live.grant().leaseMs()
                            + " ms): slowest renewal " + slowestRenewMs + " ms; the dead session lapsed " + lapseMs
                            + " ms after its last renewal");
                    assertTrue(deadLapsedAt != 0, "the dead session did not lapse while the switch stalled");
                    assertTrue(lapseMs >= live.grant().leaseMs() - 5 && lapseMs <= renewMs * 3, lapseMs + " ms");
                    assertTrue(slowestRenewMs < live.grant().leaseMs() / 2, "a renewal took " + slowestRenewMs + " ms");
                    assertEquals(3, desk.occupancy().sessions(), "live, asker and prober hold their sessions");
                    assertNull(asker.lostReason());
                    raw.close(prober.sessionId());
                } finally {
                    gate.open(); // a failed check must not leave the switch's writes held
                }
                // The switch answers again: the waiting install completes, the dead job leaves, the live one stays.
                assertEquals(
                        asker.grant().jobIdBase(),
                        stalled.get(30, TimeUnit.SECONDS).jobId());
                await(() -> controller.job(deadJob.jobId()) == null, 30_000);
                assertTrue(live.counters(liveJob.jobId()).isPresent(), "the live session's job is gone");
                assertNull(live.lostReason());
                assertEquals(1, desk.occupancy().leasesExpired());
                assertEquals(
                        JobServiceException.Kind.SESSION_LOST,
                        assertThrows(JobServiceException.class, () -> raw.renew(dead.sessionId()))
                                .kind());
            }
        }
    }

    @Test
    void renewalsThroughASlowAndThenStalledPathKeepTheLeaseAndAVanishedClientStillLapses() throws Exception {
        final long renewMs = 1_000;
        try (SwitchMain.Running sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                dir.resolve("token").toString(),
                "--renew-interval-ms",
                Long.toString(renewMs))) {
            final BearerToken token = BearerToken.read(sw.tokenFile());
            final InetSocketAddress service =
                    new InetSocketAddress("127.0.0.1", sw.jobs().port());
            final JobDesk desk = sw.jobs().desk();
            // 300 ms each way: a renewal's round trip is over half its deadline (half a lease, 1250 ms).
            try (LatencyProxy slow = LatencyProxy.start(service, 300);
                    LatencyProxy doomed = LatencyProxy.start(service, 300);
                    LeasedSession live = new LeasedSession(client(slow.port(), token), "over a slow path");
                    LeasedSession vanishing = new LeasedSession(client(doomed.port(), token), "about to vanish")) {
                final JobSpec liveJob = live.create(job(live.grant().jobIdBase(), 46000), 0);
                vanishing.create(job(vanishing.grant().jobIdBase(), 46001), 0);
                observe(live, 3 * renewMs, "latency only");

                // The vanishing client's path drops everything: its lease lapses within its bound.
                doomed.dropAll();
                final long gone = System.nanoTime();
                await(() -> desk.occupancy().leasesExpired() == 1, 10 * renewMs);
                final long lapseMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - gone);
                assertTrue(lapseMs <= 3 * renewMs, "lapsed " + lapseMs + " ms after its path went");

                // On a 50 ms path, the live client's connection freezes (no error, no data) for longer than a lease:
                // the renewal stuck in it is left behind, and the next ones go over a fresh connection.
                slow.delayMs(50);
                observe(live, 4 * renewMs, "a faster path");
                final int before = slow.connectionsAccepted();
                slow.freezeOpenConnections();
                final long frozeAt = System.nanoTime();
                final long lastLapses = desk.occupancy().leasesExpired();
                observe(live, 4 * renewMs, "a frozen connection");
                slow.thaw();
                observe(live, renewMs, "thawed");
                assertEquals(lastLapses, desk.occupancy().leasesExpired(), "a lease lapsed while the path was frozen");
                assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - frozeAt)
                        > live.grant().leaseMs());
                System.out.println("[lease] over a 300 ms path the vanished session lapsed " + lapseMs + " ms after "
                        + "its path went; over a 50 ms path the live one renewed through "
                        + (slow.connectionsAccepted() - before) + " new connection(s) while its first stayed frozen");
                assertTrue(slow.connectionsAccepted() > before, "the live client never reconnected");
                assertEquals(1, desk.occupancy().leasesExpired(), "only the vanished session lapsed");
                assertTrue(live.counters(liveJob.jobId()).isPresent());
                assertEquals(
                        JobServiceException.Kind.SESSION_LOST,
                        assertThrows(JobServiceException.class, () -> vanishingRenewDirect(sw, token, vanishing))
                                .kind());
            }
        }
    }

    /** Renews the vanished session over a direct path: the service says it is gone. */
    private static void vanishingRenewDirect(
            final SwitchMain.Running sw, final BearerToken token, final LeasedSession s) {
        try (JobServiceClient c = client(sw.jobs().port(), token)) {
            c.renew(s.grant().sessionId());
        }
    }

    /** For {@code ms}, checks that the session lives on the client and on the service. */
    private static void observe(final LeasedSession s, final long ms, final String phase) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < end) {
            assertNull(s.lostReason(), "lost during " + phase);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private static JobServiceClient client(final int port, final BearerToken token) {
        return JobServiceClient.connect(
                "127.0.0.1", port, TlsFiles.client("", "", "", token, "127.0.0.1", "the job service"));
    }

    private static void await(final BooleanSupplier done, final long limitMs) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + limitMs + " ms");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}

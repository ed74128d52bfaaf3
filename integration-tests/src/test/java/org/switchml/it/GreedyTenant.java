package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.protocol.JobSpec;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceClient;
import org.switchml.service.JobServiceException;
import org.switchml.service.Quotas;

/**
 * A tenant of a shared switch with a token of its own that asks for everything it can: every slot in one job, 128
 * sessions, and then full-size jobs until its share is used up. Each refusal must name the quota and no other
 * tenant. It keeps what it was given, renewing its sessions in the background, until closed. (Workers named by
 * host name need a raw gRPC request, which this module, built against the shaded jar, cannot make;
 * TenantIsolationTest in spark-switchml sends one.)
 */
final class GreedyTenant implements AutoCloseable {
    private final JobServiceClient client;
    private final List<JobDesk.Grant> sessions;
    private final ScheduledExecutorService renewer;
    private volatile String lost;

    private GreedyTenant(final JobServiceClient client, final List<JobDesk.Grant> sessions, final long renewMs) {
        this.client = client;
        this.sessions = sessions;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "greedy-tenant-lease");
            t.setDaemon(true);
            return t;
        });
        renewer.scheduleWithFixedDelay(this::renew, 0, renewMs / 4, TimeUnit.MILLISECONDS);
    }

    private void renew() {
        for (final JobDesk.Grant g : sessions) {
            try {
                client.renew(g.sessionId());
            } catch (final JobServiceException e) {
                if (e.kind() == JobServiceException.Kind.SESSION_LOST) {
                    lost = e.getMessage();
                }
            }
        }
    }

    /** Why one of its sessions was lost, or null. */
    String lostReason() {
        return lost;
    }

    /**
     * Asks the job service on loopback {@code port} for everything, checking each refusal; {@code others} are
     * the other tenants' application names, which no message to it may contain.
     */
    static GreedyTenant run(final int port, final BearerToken token, final long renewMs, final List<String> others) {
        final JobServiceClient c = JobServiceClient.connect(
                "127.0.0.1", port, TlsFiles.client("", "", "", token, "127.0.0.1", "the job service"));
        final List<JobDesk.Grant> sessions = new CopyOnWriteArrayList<>();
        final GreedyTenant greedy = new GreedyTenant(c, sessions, renewMs);
        final List<String> told = new ArrayList<>();
        final JobDesk.Grant g = c.open("greedy-tenant");
        sessions.add(g);
        final Quotas q = g.quotas();
        assertNotNull(q, "the service reports no quotas");
        try {
            c.create(
                    g.sessionId(),
                    new JobSpec(
                            g.jobIdBase(),
                            0,
                            0,
                            64,
                            g.switchDescription().poolSlots(),
                            List.of(new InetSocketAddress("127.0.0.1", 48000))),
                    0);
            throw new AssertionError("a job of every slot was installed");
        } catch (final JobServiceException e) {
            assertEquals(JobServiceException.Kind.OVER_QUOTA, e.kind(), e.getMessage());
            assertTrue(e.getMessage().contains("quota of slots per job (" + q.slotsPerJob()), e.getMessage());
            told.add(e.getMessage());
        }
        JobServiceException tooMany = null;
        for (int i = 1; i < 128 && tooMany == null; i++) {
            try {
                sessions.add(c.open("greedy-tenant-" + i));
            } catch (final JobServiceException e) {
                tooMany = e;
            }
        }
        assertNotNull(tooMany, "128 sessions were opened");
        assertEquals(JobServiceException.Kind.OVER_QUOTA, tooMany.kind(), tooMany.getMessage());
        assertTrue(
                tooMany.getMessage().contains("quota of sessions per token (" + q.sessionsPerToken()),
                tooMany.getMessage());
        told.add(tooMany.getMessage());
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
        assertNotNull(share, "the greedy tenant was never stopped");
        assertEquals(JobServiceException.Kind.OVER_QUOTA, share.kind(), share.getMessage());
        assertTrue(share.getMessage().contains("one token's share of the switch"), share.getMessage());
        told.add(share.getMessage());
        for (final String m : told) {
            for (final String other : others) {
                assertFalse(m.contains(other), "the greedy tenant was told another tenant's name: " + m);
            }
        }
        System.out.println("[it] the greedy tenant holds " + sessions.size() + " sessions and " + held + " jobs of "
                + q.slotsPerJob() + " slots; every other request was refused: " + told);
        return greedy;
    }

    /** Closes its sessions (their jobs go) and its client. */
    @Override
    public void close() {
        renewer.shutdownNow();
        try {
            for (final JobDesk.Grant g : sessions) {
                client.close(g.sessionId());
            }
        } finally {
            client.close();
        }
    }
}

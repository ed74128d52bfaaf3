package org.switchml.service;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;

import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * An application's session with a job service, kept alive: it renews the lease in the background every renewal
 * interval, and knows when the session is lost (the service forgot it, or no renewal got through for a whole
 * lease). Closing it closes the session, so the service removes its jobs at once, and the client. Thread-safe.
 */
public final class LeasedSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeasedSession.class);

    private final JobServiceClient client;
    private final JobDesk.Grant grant;
    private final ScheduledExecutorService renewer;
    private volatile String lostReason;
    private volatile long lastRenewNs;

    /**
     * Opens a session for {@code application} through {@code client}, which the session then owns (and closes if
     * the service refuses).
     *
     * @throws JobServiceException when the service refuses or cannot be reached
     */
    public LeasedSession(final JobServiceClient client, final String application) {
        this.client = client;
        try {
            this.grant = client.open(application);
        } catch (final RuntimeException e) {
            client.close();
            throw e;
        }
        this.lastRenewNs = System.nanoTime();
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "switchml-lease");
            t.setDaemon(true);
            return t;
        });
        renewer.scheduleWithFixedDelay(this::renew, grant.renewIntervalMs(), grant.renewIntervalMs(),
                TimeUnit.MILLISECONDS);
    }

    private void renew() {
        try {
            client.renew(grant.sessionId());
            lastRenewNs = System.nanoTime();
        } catch (final JobServiceException e) {
            if (e.kind() == JobServiceException.Kind.SESSION_LOST
                    || System.nanoTime() - lastRenewNs > TimeUnit.MILLISECONDS.toNanos(grant.leaseMs())) {
                lost(e);
            } else {
                LOG.debug("spark-switchml: lease renewal failed, trying again: {}", e.getMessage());
            }
        }
    }

    private void lost(final JobServiceException e) {
        if (lostReason == null) {
            LOG.warn("spark-switchml: the session with {} is lost: {}", client.what(), e.getMessage());
        }
        lostReason = e.getMessage();
    }

    /** What the service granted: the lease, the job-id range, the switch. */
    public JobDesk.Grant grant() {
        return grant;
    }

    /** Why the session is lost, or null while it lives. */
    public String lostReason() {
        return lostReason;
    }

    /**
     * Installs {@code spec} (its secret is ignored) and returns it as installed, waiting at most
     * {@code admissionTimeoutMs} for room. A session whose service does not answer is given up: the next one
     * opens anew, and the service lets this one lapse with its jobs if it is still there.
     */
    public JobSpec create(final JobSpec spec, final long admissionTimeoutMs) {
        try {
            return client.create(grant.sessionId(), spec, admissionTimeoutMs);
        } catch (final JobServiceException e) {
            if (e.kind() == JobServiceException.Kind.SESSION_LOST || e.kind() == JobServiceException.Kind.UNREACHABLE) {
                lost(e);
            }
            throw e;
        }
    }

    /** Removes one of the session's jobs; returns whether it had it. */
    public boolean remove(final int jobId) {
        return client.remove(grant.sessionId(), jobId);
    }

    /** The counters of one of the session's jobs. */
    public Optional<JobCounters> counters(final int jobId) {
        return client.counters(grant.sessionId(), jobId);
    }

    /** The switch's traffic, summed over every job. */
    public SwitchTotals switchTotals() {
        return client.totals();
    }

    /** Closes the session (its jobs go at once) and the client. */
    @Override
    public void close() {
        renewer.shutdownNow();
        try {
            if (lostReason == null) {
                client.close(grant.sessionId());
            }
        } catch (final JobServiceException e) {
            LOG.debug("spark-switchml: closing the session: {}", e.getMessage());
        } finally {
            client.close();
        }
    }
}

package org.switchml.service;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An application's session with a job service, kept alive: it renews the lease in the background every renewal
 * interval, and knows when the session is lost (the service forgot it, or no renewal got through for a whole
 * lease). Closing it closes the session, so the service removes its jobs at once, and the client. Thread-safe.
 *
 * <p>Renewals never wait for one another: each is sent on time whether or not the one before was answered, with
 * a deadline of half a lease, so a slow one cannot hold up the next. A renewal that fails for a reason other than
 * a lost session is sent again within a quarter of an interval, over a fresh connection when the last one timed
 * out (a connection that stalls without breaking would otherwise hold every later renewal too). The session is
 * given up when the service says it is gone, or when no renewal sent within the last lease was answered, since
 * the service may then have let it lapse.
 */
public final class LeasedSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeasedSession.class);
    /** Renewals in flight at once; more are not sent while the connection does not answer. */
    private static final int MAX_IN_FLIGHT = 4;

    private final JobServiceClient client;
    private final JobDesk.Grant grant;
    private final ScheduledExecutorService renewer;
    private final long deadlineMs;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** When the newest renewal the service answered was sent (the service's deadline is at least a lease later). */
    private final AtomicLong answeredSentNs;
    private volatile String lostReason;
    private volatile boolean closed;

    /**
     * Opens a session for {@code application} through {@code client}, which the session then owns (and closes if
     * the service refuses).
     *
     * @throws JobServiceException when the service refuses or cannot be reached
     */
    public LeasedSession(final JobServiceClient client, final String application) {
        this.client = client;
        final long sent = System.nanoTime();
        try {
            this.grant = client.open(application);
        } catch (final RuntimeException e) {
            client.close();
            throw e;
        }
        this.answeredSentNs = new AtomicLong(sent);
        this.deadlineMs = Math.max(1, grant.leaseMs() / 2);
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "switchml-lease");
            t.setDaemon(true);
            return t;
        });
        renewer.scheduleAtFixedRate(this::renew, grant.renewIntervalMs(), grant.renewIntervalMs(),
                TimeUnit.MILLISECONDS);
    }

    /** Sends one renewal, without waiting for its answer. */
    private void renew() {
        if (closed || lostReason != null || overdue(null)) {
            return;
        }
        if (inFlight.get() >= MAX_IN_FLIGHT) {
            return; // those under way end by their deadlines, and a failure reconnects
        }
        final long sent = System.nanoTime();
        inFlight.incrementAndGet();
        final CompletableFuture<Void> answer;
        try {
            answer = client.renewAsync(grant.sessionId(), deadlineMs);
        } catch (final RuntimeException e) {
            inFlight.decrementAndGet();
            LOG.debug("spark-switchml: lease renewal not sent: {}", e.toString());
            return;
        }
        answer.whenComplete((v, failure) -> {
            inFlight.decrementAndGet();
            if (failure == null) {
                answeredSentNs.accumulateAndGet(sent, Math::max);
            } else {
                failed(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
            }
        });
    }

    private void failed(final Throwable failure) {
        final JobServiceException e = failure instanceof JobServiceException j ? j
                : new JobServiceException(JobServiceException.Kind.UNREACHABLE, client.what() + " could not renew the "
                        + "lease: " + failure, failure);
        if (e.kind() == JobServiceException.Kind.SESSION_LOST) {
            lost(e.getMessage());
            return;
        }
        if (closed || overdue(e)) {
            return;
        }
        LOG.debug("spark-switchml: lease renewal failed, trying again: {}", e.getMessage());
        if (e.kind() == JobServiceException.Kind.UNREACHABLE) {
            client.reconnect();
        }
        try {
            renewer.schedule(this::renew, Math.max(1, grant.renewIntervalMs() / 4), TimeUnit.MILLISECONDS);
        } catch (final RejectedExecutionException closing) {
            // Closed meanwhile.
        }
    }

    /** Gives the session up when no renewal sent within the last lease was answered; says whether it did. */
    private boolean overdue(final JobServiceException last) {
        final long since = System.nanoTime() - answeredSentNs.get();
        if (since <= TimeUnit.MILLISECONDS.toNanos(grant.leaseMs())) {
            return false;
        }
        lost("no lease renewal sent in the last " + grant.leaseMs() + " ms was answered"
                + (last == null ? "" : " (last: " + last.getMessage() + ")"));
        return true;
    }

    private void lost(final String why) {
        if (lostReason == null) {
            LOG.warn("spark-switchml: the session with {} is lost: {}", client.what(), why);
            lostReason = why;
            renewer.shutdown();
        }
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
                lost(e.getMessage());
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
        closed = true;
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

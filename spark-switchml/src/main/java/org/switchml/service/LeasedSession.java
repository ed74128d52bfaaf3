package org.switchml.service;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;

/**
 * An application's session with a job service, kept alive: it renews the lease in the background every renewal
 * interval, and knows when the session is lost. Closing it closes the session, so the service removes its jobs at
 * once, and the client. Thread-safe.
 *
 * <p>Renewals never wait for one another: each is sent on time whether or not the one before was answered, with
 * a deadline of half a lease, so a slow one cannot hold up the next. When the next is due while one is still
 * unanswered after half an interval and two of the round trips seen so far, or when one failed for a reason other
 * than a lost session, the next goes over a fresh connection, and a failed one is sent again within a quarter
 * interval: a connection that stalls without breaking does not take the lease with it.
 *
 * <p>The service alone decides that a session is gone (it answers NOT_FOUND), and that is final. When no renewal
 * sent within the last lease has been answered the service may have let the session lapse, so it counts as lost
 * ({@link #lostReason()}) until a renewal is answered again.
 */
public final class LeasedSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeasedSession.class);
    /** Renewals in flight at once; more are not sent while the connection does not answer. */
    private static final int MAX_IN_FLIGHT = 4;

    private final JobServiceClient client;
    private final JobDesk.Grant grant;
    private final ScheduledExecutorService renewer;
    private final long deadlineMs;
    /** Send times of the renewals not answered yet, by attempt number. */
    private final Map<Long, Long> inFlight = new ConcurrentHashMap<>();

    private final AtomicLong attempts = new AtomicLong();
    /** When the newest renewal the service answered was sent (the service's deadline is at least a lease later). */
    private final AtomicLong answeredSentNs;
    /** Smoothed round trip of answered renewals, 0 before the first. */
    private volatile long rttNs;

    private volatile long reconnectedNs;
    private volatile String gone;
    private volatile String unanswered;
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
        this.reconnectedNs = sent;
        this.deadlineMs = Math.max(1, grant.leaseMs() / 2);
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "switchml-lease");
            t.setDaemon(true);
            return t;
        });
        renewer.scheduleAtFixedRate(
                this::renew, grant.renewIntervalMs(), grant.renewIntervalMs(), TimeUnit.MILLISECONDS);
    }

    /** Sends one renewal, without waiting for its answer. */
    private void renew() {
        if (closed || gone != null) {
            return;
        }
        overdue(null);
        final long now = System.nanoTime();
        long oldest = now;
        for (final long sent : inFlight.values()) {
            oldest = Math.min(oldest, sent);
        }
        // Unanswered for half an interval and two round trips, by the time the next is due: its connection
        // stalls, so the next goes over a new one.
        final long stuckAfter = Math.max(TimeUnit.MILLISECONDS.toNanos(grant.renewIntervalMs()) / 2, 2 * rttNs);
        if (now - oldest > stuckAfter && reconnectedNs - oldest < 0) {
            reconnect("a renewal sent " + TimeUnit.NANOSECONDS.toMillis(now - oldest) + " ms ago is unanswered");
        }
        if (inFlight.size() >= MAX_IN_FLIGHT) {
            return; // those under way end by their deadlines
        }
        final long id = attempts.incrementAndGet();
        inFlight.put(id, now);
        final CompletableFuture<Void> answer;
        try {
            answer = client.renewAsync(grant.sessionId(), deadlineMs);
        } catch (final RuntimeException e) {
            inFlight.remove(id);
            LOG.debug("spark-switchml: lease renewal not sent: {}", e.toString());
            return;
        }
        answer.whenComplete((v, failure) -> {
            inFlight.remove(id);
            if (failure == null) {
                answered(now);
            } else {
                failed(
                        now,
                        failure instanceof CompletionException && failure.getCause() != null
                                ? failure.getCause()
                                : failure);
            }
        });
    }

    private void answered(final long sentNs) {
        final long rtt = System.nanoTime() - sentNs;
        rttNs = rttNs == 0 ? rtt : (7 * rttNs + rtt) / 8;
        answeredSentNs.accumulateAndGet(sentNs, Math::max);
        if (unanswered != null && gone == null) {
            LOG.info("spark-switchml: the session with {} is renewed again", client.what());
            unanswered = null;
        }
    }

    private void failed(final long sentNs, final Throwable failure) {
        final JobServiceException e = failure instanceof JobServiceException j
                ? j
                : new JobServiceException(
                        JobServiceException.Kind.UNREACHABLE,
                        client.what() + " could not renew the " + "lease: " + failure,
                        failure);
        if (e.kind() == JobServiceException.Kind.SESSION_LOST) {
            gone(e.getMessage());
            return;
        }
        if (closed) {
            return;
        }
        overdue(e);
        LOG.debug("spark-switchml: lease renewal failed, trying again: {}", e.getMessage());
        if (e.kind() == JobServiceException.Kind.UNREACHABLE && reconnectedNs - sentNs < 0) {
            reconnect(e.getMessage());
        }
        try {
            renewer.schedule(this::renew, Math.max(1, grant.renewIntervalMs() / 4), TimeUnit.MILLISECONDS);
        } catch (final RejectedExecutionException closing) {
            // Closed meanwhile.
        }
    }

    private void reconnect(final String why) {
        reconnectedNs = System.nanoTime();
        LOG.debug("spark-switchml: renewing over a new connection to {}: {}", client.what(), why);
        client.reconnect();
    }

    /** Counts the session lost while no renewal sent within the last lease has been answered. */
    private void overdue(final JobServiceException last) {
        final long since = System.nanoTime() - answeredSentNs.get();
        if (since > TimeUnit.MILLISECONDS.toNanos(grant.leaseMs()) && unanswered == null) {
            unanswered = "no lease renewal sent in the last " + grant.leaseMs() + " ms was answered"
                    + (last == null ? "" : " (last: " + last.getMessage() + ")");
            LOG.warn("spark-switchml: the session with {} may be lost: {}", client.what(), unanswered);
        }
    }

    /** The service said the session is gone: final. */
    private void gone(final String why) {
        if (gone == null) {
            LOG.warn("spark-switchml: the session with {} is lost: {}", client.what(), why);
            gone = why;
            renewer.shutdown();
        }
    }

    /** What the service granted: the lease, the job-id range, the switch. */
    public JobDesk.Grant grant() {
        return grant;
    }

    /**
     * Why the session is lost, or null while it lives: the service said it is gone (final), or no renewal sent
     * within the last lease was answered (until one is).
     */
    public String lostReason() {
        return gone != null ? gone : unanswered;
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
            if (e.kind() == JobServiceException.Kind.SESSION_LOST) {
                gone(e.getMessage());
            } else if (e.kind() == JobServiceException.Kind.UNREACHABLE && unanswered == null) {
                unanswered = e.getMessage(); // until a renewal is answered again
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
            if (lostReason() == null) {
                client.close(grant.sessionId());
            }
        } catch (final JobServiceException e) {
            LOG.debug("spark-switchml: closing the session: {}", e.getMessage());
        } finally {
            client.close();
        }
    }
}

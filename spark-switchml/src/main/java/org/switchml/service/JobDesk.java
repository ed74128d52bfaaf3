package org.switchml.service;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.control.SwitchControlException;
import org.switchml.control.SwitchController;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The job service's state and rules, apart from gRPC: sessions with leases, each with its own job-id range;
 * jobs installed through the one {@link SwitchController} that owns the switch; FIFO admission when the switch
 * is full. Every method checks that the session owns what it names, so no session can see, change or remove
 * another's jobs. Failures are gRPC statuses with a message a user can act on.
 */
public final class JobDesk implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JobDesk.class);
    /** A session's job ids share their top bits: 2^24 ids each, 128 ranges below 2^31. */
    static final int ID_RANGE_BITS = 24;
    static final int ID_RANGES = 1 << (31 - ID_RANGE_BITS);

    /**
     * @param renewIntervalMs    how often a client renews its lease; a session that missed renewals for
     *                           2.5 intervals expires, and a sweep every tenth of an interval removes its jobs, so
     *                           a dead client's jobs go within 2.6 intervals of its last renewal
     * @param admissionTimeoutMs how long a request waits for room on a full switch, unless it asks for less
     * @param maxSessions        sessions at once (at most {@link #ID_RANGES})
     */
    public record Options(long renewIntervalMs, long admissionTimeoutMs, int maxSessions) {
        public static final Options DEFAULT = new Options(1_000, 10_000, ID_RANGES);

        public Options {
            if (renewIntervalMs < 10 || admissionTimeoutMs < 0 || maxSessions < 1 || maxSessions > ID_RANGES) {
                throw new IllegalArgumentException("bad job service options: renew interval " + renewIntervalMs
                        + " ms (>= 10), admission timeout " + admissionTimeoutMs + " ms (>= 0), sessions "
                        + maxSessions + " (1.." + ID_RANGES + ")");
            }
        }

        /** How long a session lives after its last renewal. */
        public long leaseMs() {
            return renewIntervalMs * 5 / 2;
        }
    }

    /** An application's session. Guarded by the desk. */
    private static final class Session {
        final String id;
        final String application;
        final int range;
        final Map<Integer, Integer> poolOfJob = new LinkedHashMap<>();
        long deadlineNs;

        Session(final String id, final String application, final int range) {
            this.id = id;
            this.application = application;
            this.range = range;
        }

        boolean owns(final int jobId) {
            return (jobId >>> ID_RANGE_BITS) == range;
        }

        int slots() {
            return poolOfJob.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /** What {@link #open} grants. */
    public record Grant(String sessionId, long renewIntervalMs, long leaseMs, int jobIdBase, int jobIdCount,
                        SwitchDescription switchDescription) {
    }

    private final SwitchController controller;
    private final SwitchDescription description;
    private final Options options;
    private final String what;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    private final ScheduledExecutorService sweeper;
    private long admissionsRefused;
    private long leasesExpired;
    private volatile boolean closed;

    /**
     * @param controller  the switch's controller, primary, with its pipeline pushed; the desk closes it
     * @param description what clients are told about the switch
     * @param what        names the switch in messages
     */
    public JobDesk(final SwitchController controller, final SwitchDescription description, final Options options,
                   final String what) {
        this.controller = controller;
        this.description = description;
        this.options = options;
        this.what = what;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            final Thread t = new Thread(r, "switchml-lease-sweeper");
            t.setDaemon(true);
            return t;
        });
        final long every = Math.max(1, options.renewIntervalMs() / 10);
        sweeper.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
    }

    public SwitchDescription description() {
        return description;
    }

    public Options options() {
        return options;
    }

    /** Opens a session for {@code application}. */
    public synchronized Grant open(final String application) {
        checkOpen();
        if (sessions.size() >= options.maxSessions()) {
            throw Status.RESOURCE_EXHAUSTED.withDescription(what + " serves " + sessions.size()
                    + " applications, its limit: " + holders()).asRuntimeException();
        }
        final boolean[] used = new boolean[ID_RANGES];
        for (final Session s : sessions.values()) {
            used[s.range] = true;
        }
        final List<Integer> free = new ArrayList<>();
        for (int r = 0; r < ID_RANGES; r++) {
            if (!used[r]) {
                free.add(r);
            }
        }
        // A random free range: ids of an earlier session of the same application are unlikely to come back.
        final int range = free.get(random.nextInt(free.size()));
        final byte[] b = new byte[32];
        random.nextBytes(b);
        final String name = application == null || application.isBlank() ? "unnamed application" : application;
        final Session s = new Session(HexFormat.of().formatHex(b), name, range);
        s.deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.leaseMs());
        sessions.put(s.id, s);
        LOG.info("{}: session of {} opened (job ids {}..{})", what, name, range << ID_RANGE_BITS,
                ((range + 1) << ID_RANGE_BITS) - 1);
        return new Grant(s.id, options.renewIntervalMs(), options.leaseMs(), range << ID_RANGE_BITS,
                1 << ID_RANGE_BITS, description);
    }

    /** Renews a session's lease. */
    public synchronized void renew(final String sessionId) {
        live(sessionId).deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.leaseMs());
    }

    /** Ends a session and removes its jobs; returns how many. */
    public synchronized int close(final String sessionId) {
        final Session s = live(sessionId);
        final int n = drop(s);
        LOG.info("{}: session of {} closed, {} jobs removed", what, s.application, n);
        return n;
    }

    /**
     * Installs {@code requested} (its secret is ignored: the switch draws one) for the session and returns the
     * spec as installed. A new job waits, in FIFO order behind earlier ones, while the switch is full, at most
     * {@code admissionTimeoutMs} (0: the desk's default); a new generation of a job the session holds does not.
     */
    public JobSpec create(final String sessionId, final JobSpec requested, final long admissionTimeoutMs) {
        final long t0 = System.nanoTime();
        synchronized (this) {
            final Session s = live(sessionId);
            final String job = "job " + requested.jobName();
            if (!s.owns(requested.jobId())) {
                throw Status.PERMISSION_DENIED.withDescription(job + " is outside the job ids of this session ("
                        + (s.range << ID_RANGE_BITS) + "..." + (((s.range + 1) << ID_RANGE_BITS) - 1) + ")")
                        .asRuntimeException();
            }
            if (requested.numWorkers() > description.maxWorkers()) {
                throw Status.INVALID_ARGUMENT.withDescription(job + " of " + s.application + " has "
                        + requested.numWorkers() + " workers, but " + what + " takes at most "
                        + description.maxWorkers() + " per job").asRuntimeException();
            }
            if (s.poolOfJob.containsKey(requested.jobId())) {
                return install(s, requested);
            }
            final long wait = admissionTimeoutMs > 0 ? Math.min(admissionTimeoutMs, options.admissionTimeoutMs())
                    : options.admissionTimeoutMs();
            final long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(wait);
            final Object ticket = new Object();
            waiting.addLast(ticket);
            try {
                String full = null;
                while (true) {
                    live(sessionId);
                    if (waiting.peekFirst() == ticket) {
                        try {
                            final JobSpec spec = install(s, requested);
                            if (full != null) {
                                LOG.info("{}: {} of {} admitted after {} ms", what, job, s.application,
                                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                            }
                            return spec;
                        } catch (final StatusRuntimeException e) {
                            if (e.getStatus().getCode() != Status.Code.RESOURCE_EXHAUSTED) {
                                throw e;
                            }
                            full = e.getStatus().getDescription();
                        }
                    }
                    final long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        admissionsRefused++;
                        throw Status.RESOURCE_EXHAUSTED.withDescription(what + " is full: " + job + " of "
                                + s.application + " waited " + wait + " ms for room ("
                                + (full == null ? "behind earlier requests" : full) + "); " + holders())
                                .asRuntimeException();
                    }
                    wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription(job + ": interrupted while waiting for room").asRuntimeException();
            } finally {
                waiting.remove(ticket);
                notifyAll();
            }
        }
    }

    private JobSpec install(final Session s, final JobSpec requested) {
        try {
            final JobSpec spec = controller.registerJob(requested).spec();
            s.poolOfJob.put(spec.jobId(), spec.poolSize());
            return spec;
        } catch (final SwitchControlException e) {
            throw Status.fromCode(e.code()).withDescription(what + ": " + e.getMessage()).asRuntimeException();
        } catch (final IllegalArgumentException | IllegalStateException e) {
            throw Status.INVALID_ARGUMENT.withDescription(what + ": " + e.getMessage()).asRuntimeException();
        }
    }

    /** Removes one of the session's jobs; returns whether it had it. */
    public synchronized boolean remove(final String sessionId, final int jobId) {
        final Session s = live(sessionId);
        if (s.poolOfJob.remove(jobId) == null) {
            return false;
        }
        removeFromSwitch(jobId);
        notifyAll();
        return true;
    }

    /** The counters of one of the session's jobs; empty when it has no such job. */
    public synchronized Optional<JobCounters> counters(final String sessionId, final int jobId) {
        final Session s = live(sessionId);
        if (!s.poolOfJob.containsKey(jobId)) {
            return Optional.empty();
        }
        return Optional.of(controller.readJobCounters(jobId));
    }

    /** How full the switch is. */
    public synchronized Occupancy occupancy() {
        int jobs = 0;
        int slots = 0;
        for (final Session s : sessions.values()) {
            jobs += s.poolOfJob.size();
            slots += s.slots();
        }
        return new Occupancy(sessions.size(), jobs, slots, description.poolSlots(), waiting.size(), admissionsRefused,
                leasesExpired);
    }

    /**
     * The switch's traffic summed over every job's counter cells, and its switch-wide drops. Not under the desk's
     * lock: reading every cell takes a while, and renewals must not wait behind it.
     */
    public SwitchTotals totals() {
        checkOpen();
        final long[] drops = controller.readCounter(P4Names.JOB_DROPS);
        final int stride = Math.max(1, drops.length / Math.max(1, description.jobIndices()));
        final JobCounters jobs = new JobCounters(sum(controller.readCounter(P4Names.JOB_PACKETS_IN)),
                sum(controller.readCounter(P4Names.JOB_PACKETS_OUT)),
                sum(controller.readCounter(P4Names.JOB_RETRANSMISSIONS)),
                DropCounts.of(r -> {
                    long n = 0;
                    for (int i = r.ordinal(); r.ordinal() < stride && i < drops.length; i += stride) {
                        n += drops[i];
                    }
                    return n;
                }));
        return new SwitchTotals(jobs, controller.readSwitchCounters());
    }

    private static long sum(final long[] cells) {
        long s = 0;
        for (final long c : cells) {
            s += c;
        }
        return s;
    }

    /** Removes the sessions whose lease lapsed, with their jobs. */
    synchronized void sweep() {
        final long now = System.nanoTime();
        for (final Session s : new ArrayList<>(sessions.values())) {
            if (now - s.deadlineNs > 0) {
                leasesExpired++;
                final int n = drop(s);
                LOG.warn("{}: the lease of {} lapsed (no renewal for {} ms): its session and {} jobs are removed",
                        what, s.application, options.leaseMs(), n);
            }
        }
    }

    private int drop(final Session s) {
        sessions.remove(s.id);
        final List<Integer> jobs = new ArrayList<>(s.poolOfJob.keySet());
        s.poolOfJob.clear();
        for (final int j : jobs) {
            removeFromSwitch(j);
        }
        notifyAll();
        return jobs.size();
    }

    private void removeFromSwitch(final int jobId) {
        try {
            controller.removeJob(jobId);
        } catch (final RuntimeException e) {
            LOG.warn("{}: cannot remove job {}: {}", what, Integer.toUnsignedString(jobId), e.toString());
        }
    }

    private Session live(final String sessionId) {
        checkOpen();
        final Session s = sessionId == null ? null : sessions.get(sessionId);
        if (s == null) {
            throw Status.NOT_FOUND.withDescription(what + " has no such session: it expired (its lease lapsed and "
                    + "its jobs were removed) or was closed").asRuntimeException();
        }
        return s;
    }

    private void checkOpen() {
        if (closed) {
            throw Status.UNAVAILABLE.withDescription(what + " is shutting down").asRuntimeException();
        }
    }

    /** Who holds the switch, for "full" messages: per application, its jobs and slots. */
    private String holders() {
        final StringBuilder sb = new StringBuilder();
        int jobs = 0;
        int slots = 0;
        for (final Session s : sessions.values()) {
            jobs += s.poolOfJob.size();
            slots += s.slots();
        }
        sb.append(sessions.size()).append(" applications hold ").append(jobs).append(" of ")
                .append(description.jobIndices()).append(" jobs and ").append(slots).append(" of ")
                .append(description.poolSlots()).append(" slots");
        String sep = " (";
        for (final Session s : sessions.values()) {
            sb.append(sep).append(s.application).append(": ").append(s.poolOfJob.size()).append(" jobs, ")
                    .append(s.slots()).append(" slots");
            sep = "; ";
        }
        if (!sessions.isEmpty()) {
            sb.append(')');
        }
        return sb.toString();
    }

    /** Stops the sweeper, removes every session's jobs and closes the controller. */
    @Override
    public void close() {
        sweeper.shutdownNow();
        synchronized (this) {
            if (closed) {
                return;
            }
            for (final Session s : new ArrayList<>(sessions.values())) {
                drop(s);
            }
            closed = true;
            notifyAll();
        }
        controller.close();
    }
}

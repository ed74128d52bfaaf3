package org.switchml.service;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.control.RegisteredJob;
import org.switchml.control.SwitchControlException;
import org.switchml.control.SwitchController;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;

/**
 * The job service's state and rules, apart from gRPC: sessions with leases, each with its own job-id range and
 * its tenant (the application token it came with); jobs installed through the one {@link SwitchController} that
 * owns the switch; quotas ({@link Quotas}); and admission when the switch is full. Every method checks that the
 * session owns what it names, so no session can see, change or remove another's jobs. Refusals are
 * {@link JobDeskException}s whose messages a user can act on and which name no other session or tenant.
 *
 * <p>Admission: requests wait in arrival order, and each is admitted as soon as it fits, ahead of earlier ones
 * that do not fit yet, so one request that cannot fit never holds up smaller ones that can. A request that has
 * waited {@link Options#reserveAfterMs()} reserves what it needs: from then on, later requests are admitted only
 * from what is free beyond that need, so what running jobs free accumulates for it and it cannot be overtaken
 * forever. Every wait is bounded by the request's admission timeout.
 *
 * <p>Threads: the desk's lock guards its bookkeeping only and is never held across a controller call. Installs
 * and removals run in arrival order on one thread of their own; counter reads on a small pool; lease renewals
 * and everything that only reads the bookkeeping answer at once, whatever the switch is doing.
 */
public final class JobDesk implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JobDesk.class);
    /** A session's job ids share their top bits: 2^24 ids each, 128 ranges below 2^31. */
    static final int ID_RANGE_BITS = 24;

    static final int ID_RANGES = 1 << (31 - ID_RANGE_BITS);
    /** Longest application name a session takes. */
    public static final int MAX_NAME_LENGTH = 128;
    /** Counter reads queued at once; more are refused rather than parked. */
    private static final int MAX_READS_QUEUED = 64;

    /**
     * @param renewIntervalMs    how often a client renews its lease; a session that missed renewals for
     *                           2.5 intervals expires, and a sweep every tenth of an interval removes its jobs, so
     *                           a dead client's jobs go within 2.6 intervals of its last renewal
     * @param admissionTimeoutMs how long a request waits for room on a full switch, unless it asks for less
     * @param reserveAfterMs     how long a waiting request may be overtaken by later ones that fit before it
     *                           reserves what it needs
     * @param quotas             what one job, session and tenant may hold
     */
    public record Options(long renewIntervalMs, long admissionTimeoutMs, long reserveAfterMs, Quotas quotas) {
        public static final Options DEFAULT = new Options(1_000, 10_000, 2_000, Quotas.DEFAULT);

        public Options {
            if (renewIntervalMs < 10 || admissionTimeoutMs < 0 || reserveAfterMs < 0 || quotas == null) {
                throw new IllegalArgumentException("bad job service options: renew interval " + renewIntervalMs
                        + " ms (>= 10), admission timeout " + admissionTimeoutMs + " ms (>= 0), reserve after "
                        + reserveAfterMs + " ms (>= 0), quotas " + quotas);
            }
        }

        /** How long a session lives after its last renewal. */
        public long leaseMs() {
            return renewIntervalMs * 5 / 2;
        }

        public Options withQuotas(final Quotas q) {
            return new Options(renewIntervalMs, admissionTimeoutMs, reserveAfterMs, q);
        }
    }

    /** What {@link #open} grants. */
    public record Grant(
            String sessionId,
            long renewIntervalMs,
            long leaseMs,
            int jobIdBase,
            int jobIdCount,
            SwitchDescription switchDescription,
            Quotas quotas) {}

    /** What a job holds of the switch's shared capacity. */
    private record Need(long slots, long jobs, long workers, long bytes) {
        static final Need ZERO = new Need(0, 0, 0, 0);

        static Need of(final JobSpec s) {
            return new Need(s.poolSize(), 1, s.numWorkers(), Quotas.jobBytes(s));
        }

        Need plus(final Need o) {
            return new Need(slots + o.slots, jobs + o.jobs, workers + o.workers, bytes + o.bytes);
        }

        Need minus(final Need o) {
            return new Need(slots - o.slots, jobs - o.jobs, workers - o.workers, bytes - o.bytes);
        }

        Need atLeastZero() {
            return new Need(Math.max(0, slots), Math.max(0, jobs), Math.max(0, workers), Math.max(0, bytes));
        }

        Need max(final Need o) {
            return new Need(
                    Math.max(slots, o.slots),
                    Math.max(jobs, o.jobs),
                    Math.max(workers, o.workers),
                    Math.max(bytes, o.bytes));
        }

        /** Whether this fits {@code room}; what needs none of a resource fits whatever is left of it. */
        boolean fitsIn(final Need room) {
            return fits(slots, room.slots)
                    && fits(jobs, room.jobs)
                    && fits(workers, room.workers)
                    && fits(bytes, room.bytes);
        }

        private static boolean fits(final long need, final long room) {
            return need <= 0 || need <= room;
        }

        /** The parts of this that exceed {@code room}, as "N slots (M free)", for messages. */
        String over(final Need room, final String free) {
            final List<String> out = new ArrayList<>();
            if (slots > room.slots) {
                out.add(slots + " pool slots (" + Math.max(0, room.slots) + " " + free + ")");
            }
            if (jobs > room.jobs) {
                out.add("a job index (" + Math.max(0, room.jobs) + " " + free + ")");
            }
            if (workers > room.workers) {
                out.add(workers + " worker rows (" + Math.max(0, room.workers) + " " + free + ")");
            }
            if (bytes > room.bytes) {
                out.add(bytes + " bytes of switch state (" + Math.max(0, room.bytes) + " " + free + ")");
            }
            return String.join(", ", out);
        }
    }

    /** A job a session holds: the spec as installed and what it holds. */
    private record Held(JobSpec spec, Need need) {}

    /** An application's session. Guarded by the desk. */
    private static final class Session {
        final String id;
        final String application;
        final int tenant;
        final int range;
        final Map<Integer, Held> jobs = new LinkedHashMap<>();
        final Map<Integer, Request> pending = new LinkedHashMap<>();
        long deadlineNs;

        Session(final String id, final String application, final int tenant, final int range) {
            this.id = id;
            this.application = application;
            this.tenant = tenant;
            this.range = range;
        }

        boolean owns(final int jobId) {
            return (jobId >>> ID_RANGE_BITS) == range;
        }

        long waiting() {
            return pending.values().stream().filter(r -> !r.installing).count();
        }
    }

    /** A request for a job: waiting for room, or being installed. Guarded by the desk. */
    private static final class Request {
        final Session session;
        final JobSpec spec;
        final String job;
        final Need need;
        /** What it adds to the switch's use once installed: its need, less what the job it replaces held. */
        final Need growth;

        final Held replaces;
        final long enqueuedNs;
        final long deadlineNs;
        final long waitMs;
        final CompletableFuture<JobSpec> done = new CompletableFuture<>();
        boolean installing;
        /** The release count at which the switch last refused it for want of room; it waits for a later one. */
        long refusedAtRelease = -1;

        String shortfall;
        ScheduledFuture<?> expiry;

        Request(final Session session, final JobSpec spec, final Held replaces, final long waitMs) {
            this.session = session;
            this.spec = spec;
            this.job = "job " + spec.jobName() + " of " + session.application;
            this.need = Need.of(spec);
            this.replaces = replaces;
            this.growth = replaces == null ? need : need.minus(replaces.need).atLeastZero();
            this.enqueuedNs = System.nanoTime();
            this.waitMs = waitMs;
            this.deadlineNs = enqueuedNs + TimeUnit.MILLISECONDS.toNanos(waitMs);
        }
    }

    private final SwitchController controller;
    private final SwitchDescription description;
    private final Options options;
    private final Quotas quotas;
    private final String what;
    private final WorkerAddresses addresses;
    /** The switch's shared capacity, and one tenant's share of it. */
    private final Need capacity;

    private final Need share;
    private final SecureRandom random = new SecureRandom();
    private final Map<String, Session> sessions = new LinkedHashMap<>();
    /** Waiting requests, in arrival order. */
    private final List<Request> queue = new ArrayList<>();

    private final List<Request> installing = new ArrayList<>();
    /** Jobs whose removal from the switch is under way: still held until the controller says they are gone. */
    private final List<Held> removing = new ArrayList<>();
    /** How many times room was freed (a job removed, an install given up). */
    private long releases;

    private final ScheduledExecutorService timers;
    private final ExecutorService switchWork;
    private final ThreadPoolExecutor reads;
    private long admissionsRefused;
    private long quotaRefusals;
    private long leasesExpired;
    private boolean closed;

    /**
     * @param controller  the switch's controller, primary, with its pipeline pushed; the desk closes it
     * @param description what clients are told about the switch
     * @param what        names the switch in messages
     */
    public JobDesk(
            final SwitchController controller,
            final SwitchDescription description,
            final Options options,
            final String what) {
        this.controller = controller;
        this.description = description;
        this.options = options;
        this.what = what;
        this.addresses = new WorkerAddresses(description.dataplane());
        final int rows = controller.workerRows();
        final int workers = options.quotas().workers() == 0
                ? rows
                : Math.min(rows, options.quotas().workers());
        this.quotas = options.quotas().withWorkers(workers);
        this.capacity = new Need(description.poolSlots(), description.jobIndices(), workers, quotas.bytes());
        final int p = quotas.tokenSharePercent();
        this.share = new Need(
                capacity.slots * p / 100,
                capacity.jobs * p / 100,
                capacity.workers * p / 100,
                capacity.bytes == Long.MAX_VALUE || p == 100 ? capacity.bytes : capacity.bytes / 100 * p);
        this.timers = Executors.newSingleThreadScheduledExecutor(daemon("switchml-desk-timer"));
        this.switchWork = Executors.newSingleThreadExecutor(daemon("switchml-desk-switch"));
        this.reads = new ThreadPoolExecutor(
                2, 2, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(MAX_READS_QUEUED), daemon("switchml-desk-reads"));
        reads.allowCoreThreadTimeOut(true);
        final long every = Math.max(1, options.renewIntervalMs() / 10);
        timers.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
    }

    private static ThreadFactory daemon(final String name) {
        return r -> {
            final Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    public SwitchDescription description() {
        return description;
    }

    public Options options() {
        return options;
    }

    /** The quotas in force (the total of workers resolved to what the switch holds). */
    public Quotas quotas() {
        return quotas;
    }

    // ------------------------------------------------------------------------------------------- sessions

    /**
     * Opens a session for {@code application} on behalf of {@code tenant} (the token's number; 0 in process).
     *
     * @throws JobDeskException INVALID (a name too long or with control characters), OVER_QUOTA (sessions in
     *                          all, or of this tenant)
     */
    public synchronized Grant open(final String application, final int tenant) {
        checkOpen();
        final String name = application == null || application.isBlank() ? "unnamed application" : application;
        if (name.length() > MAX_NAME_LENGTH || name.codePoints().anyMatch(Character::isISOControl)) {
            throw new JobDeskException(
                    JobDeskException.Kind.INVALID,
                    what + " takes application names of at most " + MAX_NAME_LENGTH
                            + " characters without control characters; this one has " + name.length());
        }
        if (sessions.size() >= quotas.sessions()) {
            throw overQuota(what + " serves " + sessions.size() + " sessions, its quota of sessions in all ("
                    + quotas.sessions() + ", --max-applications)");
        }
        final long ofTenant =
                sessions.values().stream().filter(s -> s.tenant == tenant).count();
        if (ofTenant >= quotas.sessionsPerToken()) {
            throw overQuota(what + ": this token holds " + ofTenant + " sessions, its quota of sessions per token ("
                    + quotas.sessionsPerToken() + ", --max-sessions-per-token)");
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
        final Session s = new Session(HexFormat.of().formatHex(b), name, tenant, range);
        s.deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.leaseMs());
        sessions.put(s.id, s);
        LOG.info(
                "{}: session of {} opened for tenant {} (job ids {}..{})",
                what,
                name,
                tenant,
                range << ID_RANGE_BITS,
                ((range + 1) << ID_RANGE_BITS) - 1);
        return new Grant(
                s.id,
                options.renewIntervalMs(),
                options.leaseMs(),
                range << ID_RANGE_BITS,
                1 << ID_RANGE_BITS,
                description,
                quotas);
    }

    /** Renews a session's lease. Answers at once, whatever the switch is doing. */
    public synchronized void renew(final String sessionId) {
        live(sessionId).deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(options.leaseMs());
    }

    /**
     * Ends a session at once; its jobs leave the switch in the background. Completes with how many jobs it held,
     * once they are gone.
     */
    public CompletableFuture<Integer> close(final String sessionId) {
        final Dropped dropped;
        final Session s;
        final List<CompletableFuture<Boolean>> removals;
        synchronized (this) {
            s = live(sessionId);
            dropped = drop(s, "it was closed");
        }
        removals = dropped.refuse().removals();
        LOG.info("{}: session of {} closed, {} jobs removed", what, s.application, removals.size());
        return CompletableFuture.allOf(removals.toArray(new CompletableFuture<?>[0]))
                .thenApply(x -> removals.size());
    }

    // ------------------------------------------------------------------------------------------- jobs

    /**
     * Asks for {@code requested} (its secret is ignored: the switch draws one) for the session; completes with
     * the spec as installed. A request within its quotas waits for room while the switch is full, at most
     * {@code admissionTimeoutMs} (0: the desk's default), and is admitted by the policy in the class comment. A new
     * generation of a job the session holds goes through admission as well, needing only what it adds.
     *
     * @throws JobDeskException at once: NO_SESSION, NOT_YOURS, INVALID (addresses, a job that can never fit),
     *                          OVER_QUOTA, BUSY (a request for the same job is in progress); the future fails with
     *                          FULL when the wait ends, SWITCH when the switch refuses the writes
     */
    public CompletableFuture<JobSpec> create(
            final String sessionId, final JobSpec requested, final long admissionTimeoutMs) {
        final Request r;
        final List<Request> start;
        JobDeskException tooMany = null;
        synchronized (this) {
            final Session s = live(sessionId);
            final int id = requested.jobId();
            final String job = "job " + requested.jobName() + " of " + s.application;
            if (!s.owns(id)) {
                throw new JobDeskException(
                        JobDeskException.Kind.NOT_YOURS,
                        "job " + requested.jobName()
                                + " is outside the job ids of this session (" + (s.range << ID_RANGE_BITS) + "..."
                                + (((s.range + 1) << ID_RANGE_BITS) - 1) + ")");
            }
            final String bad = addresses.refusal(requested.workers());
            if (bad != null) {
                throw new JobDeskException(JobDeskException.Kind.INVALID, what + " refuses " + job + ": " + bad);
            }
            if (s.pending.containsKey(id)) {
                throw new JobDeskException(
                        JobDeskException.Kind.BUSY,
                        job + ": another request of this session for " + "the same job is in progress");
            }
            checkJobQuotas(s, requested, job);
            final Held old = s.jobs.get(id);
            if (old == null && s.jobs.size() + s.pending.size() >= quotas.jobsPerSession()) {
                throw overQuota(job + ": this session holds " + s.jobs.size() + " jobs and asks for "
                        + s.pending.size() + " more, its quota of jobs per session (" + quotas.jobsPerSession()
                        + ", --max-jobs-per-session)");
            }
            final long wait = admissionTimeoutMs > 0
                    ? Math.min(admissionTimeoutMs, options.admissionTimeoutMs())
                    : options.admissionTimeoutMs();
            r = new Request(s, requested, old, wait);
            checkShare(r);
            s.pending.put(id, r);
            queue.add(r);
            start = pump();
            if (!r.installing && s.waiting() > quotas.waitersPerSession()) {
                // It would wait, and the session has as many waiting as it may: refused, not queued.
                queue.remove(r);
                s.pending.remove(id);
                tooMany = overQuota(job + ": this session has " + (s.waiting() - 1) + " requests waiting for room, its "
                        + "quota of waiters per session (" + quotas.waitersPerSession()
                        + ", --max-waiters-per-session)");
            } else if (!r.installing) {
                r.expiry = timers.schedule(() -> expire(r), Math.max(1, wait), TimeUnit.MILLISECONDS);
            }
        }
        begin(start);
        if (tooMany != null) {
            throw tooMany;
        }
        return r.done;
    }

    /** Per-job quotas, and what the switch can never hold: refused at once. */
    private void checkJobQuotas(final Session s, final JobSpec spec, final String job) {
        if (spec.numWorkers() > description.maxWorkers()) {
            throw overQuota(job + " has " + spec.numWorkers() + " workers, but " + what + " takes at most "
                    + description.maxWorkers() + " per job (--max-workers-per-job)");
        }
        if (spec.poolSize() > quotas.slotsPerJob()) {
            throw overQuota(job + " asks for " + spec.poolSize() + " pool slots, over the quota of slots per job ("
                    + quotas.slotsPerJob() + ", --max-slots-per-job)");
        }
        final long bytes = Quotas.jobBytes(spec);
        if (bytes > quotas.bytesPerJob()) {
            throw overQuota(job + " would make the switch allocate " + bytes + " bytes (k = " + spec.k() + ", "
                    + spec.poolSize() + " slots, " + spec.numWorkers() + " workers), over the quota of bytes per job ("
                    + quotas.bytesPerJob() + ", --max-job-bytes)");
        }
        final Need need = Need.of(spec);
        if (!need.fitsIn(capacity)) {
            throw new JobDeskException(
                    JobDeskException.Kind.INVALID,
                    job + " can never fit " + what + ": it needs " + need.over(capacity, "in all"));
        }
    }

    /** The tenant's share: what its sessions hold and ask for, with this request, refused at once beyond it. */
    private void checkShare(final Request r) {
        if (quotas.tokenSharePercent() == 100) {
            return; // no share: what the switch holds is the only bound, and a request waits for it
        }
        Need use = Need.ZERO;
        for (final Session s : sessions.values()) {
            if (s.tenant != r.session.tenant) {
                continue;
            }
            for (final Held h : s.jobs.values()) {
                final Request p = s.pending.get(h.spec().jobId());
                use = use.plus(p == null ? h.need() : h.need().max(p.need));
            }
            for (final Request p : s.pending.values()) {
                if (!s.jobs.containsKey(p.spec.jobId())) {
                    use = use.plus(p.need);
                }
            }
        }
        final Need after = use.plus(r.growth);
        if (!after.fitsIn(share)) {
            throw overQuota(r.job + ": this token's sessions would hold " + after.over(share, "is its share")
                    + ": the quota of one token's share of the switch (" + quotas.tokenSharePercent()
                    + " %, --token-share-percent)");
        }
    }

    /**
     * Admits every waiting request that fits now, in arrival order; requests that have waited past
     * {@link Options#reserveAfterMs()} hold back what they need from later ones. Returns the admitted, which the
     * caller starts once it has left the lock.
     */
    private List<Request> pump() {
        final List<Request> start = new ArrayList<>();
        if (closed) {
            return start;
        }
        Need free = capacity.minus(used());
        Need reserved = Need.ZERO;
        final long now = System.nanoTime();
        final long reserveAfterNs = TimeUnit.MILLISECONDS.toNanos(options.reserveAfterMs());
        for (final Request r : queue) {
            final boolean fits = r.refusedAtRelease != releases && r.growth.fitsIn(free.minus(reserved));
            if (fits) {
                start.add(r);
                free = free.minus(r.growth);
            } else {
                r.shortfall = r.refusedAtRelease == releases
                        ? "the switch found no room for it when it last tried"
                        : r.growth.over(free.minus(reserved), "free for it");
                if (now - r.enqueuedNs >= reserveAfterNs) {
                    reserved = reserved.plus(r.growth);
                }
            }
        }
        for (final Request r : start) {
            queue.remove(r);
            installing.add(r);
            r.installing = true;
            if (r.expiry != null) {
                r.expiry.cancel(false);
            }
        }
        return start;
    }

    /** What jobs hold, are being installed with, or still hold while they are removed. */
    private Need used() {
        Need u = Need.ZERO;
        for (final Session s : sessions.values()) {
            for (final Held h : s.jobs.values()) {
                u = u.plus(h.need());
            }
        }
        for (final Request r : installing) {
            u = u.plus(r.growth);
        }
        for (final Held h : removing) {
            u = u.plus(h.need());
        }
        return u;
    }

    /** Hands admitted requests to the switch thread. Called without the lock. */
    private void begin(final List<Request> start) {
        for (final Request r : start) {
            try {
                switchWork.execute(() -> install(r));
            } catch (final RejectedExecutionException e) {
                abandon(r, new JobDeskException(JobDeskException.Kind.SHUTTING_DOWN, what + " is shutting down"));
            }
        }
    }

    /** On the switch thread: installs {@code r}'s job, then settles the bookkeeping under the lock. */
    private void install(final Request r) {
        final int id = r.spec.jobId();
        RegisteredJob job = null;
        RuntimeException failure = null;
        try {
            job = controller.registerJob(r.spec);
        } catch (final RuntimeException e) {
            failure = e;
        }
        // A failed new generation may have taken the previous one with it (a new shape removes it first).
        final boolean previousGone = failure != null && r.replaces != null && controller.job(id) == null;
        final JobDeskException refusal = failure == null ? null : switchFailure(r, failure);
        List<Request> start;
        final Held installed = job == null ? null : new Held(job.spec(), Need.of(job.spec()));
        boolean orphan = false;
        boolean retry = false;
        synchronized (this) {
            installing.remove(r);
            final Session s = r.session;
            if (failure == null) {
                if (sessions.get(s.id) != s || closed) {
                    orphan = true; // the session went while the switch installed it: take the job off again
                    removing.add(installed);
                } else {
                    s.jobs.put(id, installed);
                }
                s.pending.remove(id);
            } else {
                if (previousGone) {
                    s.jobs.remove(id);
                }
                releases++;
                retry = refusal.kind() == JobDeskException.Kind.FULL
                        && !previousGone
                        && sessions.get(s.id) == s
                        && !closed
                        && System.nanoTime() - r.deadlineNs < 0;
                if (retry) {
                    // The switch's allocator saw no room (its pool in pieces): wait for the next release.
                    r.installing = false;
                    r.refusedAtRelease = releases;
                    int at = 0;
                    while (at < queue.size() && queue.get(at).enqueuedNs <= r.enqueuedNs) {
                        at++;
                    }
                    queue.add(at, r);
                    final long left = TimeUnit.NANOSECONDS.toMillis(r.deadlineNs - System.nanoTime());
                    r.expiry = timers.schedule(() -> expire(r), Math.max(1, left), TimeUnit.MILLISECONDS);
                } else {
                    s.pending.remove(id);
                }
            }
            start = pump();
        }
        if (orphan) {
            removeFromSwitch(id, installed);
            r.done.completeExceptionally(new JobDeskException(
                    JobDeskException.Kind.NO_SESSION,
                    what + ": the session of " + r.job + " ended while the job was installed; it was removed"));
        } else if (failure == null) {
            r.done.complete(job.spec());
            final long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - r.enqueuedNs);
            if (waited > 100) {
                LOG.info("{}: {} admitted after {} ms", what, r.job, waited);
            }
        } else if (!retry) {
            r.done.completeExceptionally(refusal);
        }
        begin(start);
    }

    /** The desk's refusal for a controller failure of {@code r}. */
    private JobDeskException switchFailure(final Request r, final RuntimeException e) {
        if (e instanceof SwitchControlException sce) {
            final String code = sce.code().name();
            if (code.equals("RESOURCE_EXHAUSTED")) {
                return new JobDeskException(JobDeskException.Kind.FULL, what + ": " + e.getMessage(), null, e);
            }
            return new JobDeskException(JobDeskException.Kind.SWITCH, what + ": " + e.getMessage(), code, e);
        }
        if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
            return new JobDeskException(JobDeskException.Kind.INVALID, what + ": " + e.getMessage(), null, e);
        }
        LOG.error("{}: installing {} failed", what, r.job, e);
        return new JobDeskException(
                JobDeskException.Kind.SWITCH,
                what + ": installing " + r.job + " failed: " + e.getClass().getSimpleName(),
                "INTERNAL",
                e);
    }

    /** The admission wait of {@code r} ended: refuse it if it still waits. */
    private void expire(final Request r) {
        final List<Request> start;
        final String message;
        synchronized (this) {
            if (r.installing || !queue.remove(r)) {
                return;
            }
            r.session.pending.remove(r.spec.jobId());
            admissionsRefused++;
            message = what + " is full: " + r.job + " waited " + r.waitMs + " ms for room (it needs "
                    + (r.shortfall == null ? "more than is free" : r.shortfall) + "); " + fullness();
            start = pump(); // a request that reserved room no longer does
        }
        r.done.completeExceptionally(new JobDeskException(JobDeskException.Kind.FULL, message));
        begin(start);
    }

    private void abandon(final Request r, final JobDeskException why) {
        synchronized (this) {
            installing.remove(r);
            queue.remove(r);
            r.session.pending.remove(r.spec.jobId());
        }
        r.done.completeExceptionally(why);
    }

    /**
     * Withdraws a request whose caller went away: a waiting one leaves the queue (an installing one completes, and
     * the session holds the job as it would have).
     */
    public void withdraw(final CompletableFuture<JobSpec> request) {
        Request found = null;
        final List<Request> start;
        synchronized (this) {
            for (final Request r : queue) {
                if (r.done == request) {
                    found = r;
                }
            }
            if (found == null) {
                return;
            }
            queue.remove(found);
            found.session.pending.remove(found.spec.jobId());
            if (found.expiry != null) {
                found.expiry.cancel(false);
            }
            start = pump();
        }
        found.done.completeExceptionally(new JobDeskException(
                JobDeskException.Kind.CANCELLED, found.job + ": its caller went away while it waited"));
        begin(start);
    }

    /**
     * Removes one of the session's jobs; completes with whether it held it, once the switch forgot it. A request
     * for the job that still waits for room is withdrawn; one being installed is refused (BUSY) until it is answered.
     */
    public CompletableFuture<Boolean> remove(final String sessionId, final int jobId) {
        final Held h;
        Request withdrawn = null;
        synchronized (this) {
            final Session s = live(sessionId);
            final Request p = s.pending.get(jobId);
            if (p != null && p.installing) {
                throw new JobDeskException(
                        JobDeskException.Kind.BUSY,
                        p.job + " is being installed; remove it once " + "that request is answered");
            }
            h = s.jobs.remove(jobId);
            if (p != null) {
                withdrawn = p;
            }
            if (h != null) {
                removing.add(h);
            }
        }
        if (withdrawn != null) {
            withdraw(withdrawn.done);
        }
        if (h == null) {
            return CompletableFuture.completedFuture(false);
        }
        return removeFromSwitch(jobId, h).thenApply(x -> true);
    }

    /**
     * On the switch thread: removes the job, then releases what it held (it is counted in {@link #removing} until
     * then, so nothing else is admitted into room the switch has not freed yet).
     */
    private CompletableFuture<Void> removeFromSwitch(final int jobId, final Held h) {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final Runnable work = () -> {
            try {
                controller.removeJob(jobId);
            } catch (final RuntimeException e) {
                LOG.warn("{}: cannot remove job {}: {}", what, Integer.toUnsignedString(jobId), e.getMessage());
            }
            final List<Request> start;
            synchronized (this) {
                removing.remove(h);
                releases++;
                start = pump();
            }
            done.complete(null);
            begin(start);
        };
        try {
            switchWork.execute(work);
        } catch (final RejectedExecutionException e) {
            synchronized (this) {
                removing.remove(h);
            }
            done.complete(null);
        }
        return done;
    }

    /** The counters of one of the session's jobs; empty when it has no such job. Read off the caller's thread. */
    public CompletableFuture<Optional<JobCounters>> counters(final String sessionId, final int jobId) {
        synchronized (this) {
            if (!live(sessionId).jobs.containsKey(jobId)) {
                return CompletableFuture.completedFuture(Optional.empty());
            }
        }
        return read("the counters of job " + Integer.toUnsignedString(jobId), () -> {
            try {
                return Optional.of(controller.readJobCounters(jobId));
            } catch (final IllegalArgumentException gone) {
                return Optional.<JobCounters>empty(); // removed meanwhile
            }
        });
    }

    /** How full the switch is. */
    public synchronized Occupancy occupancy() {
        final Need u = used();
        int jobs = 0;
        for (final Session s : sessions.values()) {
            jobs += s.jobs.size();
        }
        return new Occupancy(
                sessions.size(),
                jobs,
                (int) u.slots,
                description.poolSlots(),
                queue.size(),
                admissionsRefused,
                leasesExpired,
                quotaRefusals,
                (int) u.workers,
                u.bytes);
    }

    /**
     * The switch's traffic summed over every job's counter cells, and its switch-wide drops. Read off the caller's
     * thread and without the desk's lock: reading every cell takes a while.
     */
    public CompletableFuture<SwitchTotals> totals() {
        checkOpen();
        return read(
                "the switch's traffic",
                () -> new SwitchTotals(controller.readJobTotals(), controller.readSwitchCounters()));
    }

    private <T> CompletableFuture<T> read(final String what, final java.util.function.Supplier<T> work) {
        try {
            return CompletableFuture.supplyAsync(work, reads);
        } catch (final RejectedExecutionException e) {
            throw new JobDeskException(
                    JobDeskException.Kind.BUSY,
                    this.what + " is answering " + MAX_READS_QUEUED + " reads already; read " + what + " again later");
        }
    }

    // ------------------------------------------------------------------------------------------- leases

    /** Removes the sessions whose lease lapsed, with their jobs. */
    void sweep() {
        final List<String> lapsed = new ArrayList<>();
        final List<Dropped> dropped = new ArrayList<>();
        synchronized (this) {
            final long now = System.nanoTime();
            for (final Session s : new ArrayList<>(sessions.values())) {
                if (now - s.deadlineNs > 0) {
                    leasesExpired++;
                    final Dropped d = drop(s, "its lease lapsed");
                    dropped.add(d);
                    lapsed.add(s.application + " (" + d.removals().size() + " jobs)");
                }
            }
        }
        dropped.forEach(Dropped::refuse);
        for (final String l : lapsed) {
            LOG.warn(
                    "{}: the lease of {} lapsed (no renewal for {} ms): its session and jobs are removed",
                    what,
                    l,
                    options.leaseMs());
        }
    }

    /** What forgetting a session left to do: its waiting requests to refuse, and its jobs' removals. */
    private record Dropped(List<Request> refused, JobDeskException why, List<CompletableFuture<Boolean>> removals) {
        /** Refuses the requests; called without the lock, since completing them answers their callers. */
        Dropped refuse() {
            for (final Request r : refused) {
                r.done.completeExceptionally(why);
            }
            return this;
        }
    }

    /** Forgets {@code s}: takes its waiting requests out of the queue and starts removing its jobs. Under the lock. */
    private Dropped drop(final Session s, final String why) {
        sessions.remove(s.id);
        final List<Request> waiting = new ArrayList<>();
        for (final Request r : s.pending.values()) {
            if (!r.installing) {
                waiting.add(r);
            }
        }
        for (final Request r : waiting) {
            queue.remove(r);
            s.pending.remove(r.spec.jobId());
            if (r.expiry != null) {
                r.expiry.cancel(false);
            }
        }
        final List<CompletableFuture<Boolean>> out = new ArrayList<>();
        for (final Map.Entry<Integer, Held> e : new ArrayList<>(s.jobs.entrySet())) {
            removing.add(e.getValue());
            out.add(removeFromSwitch(e.getKey(), e.getValue()).thenApply(x -> true));
        }
        s.jobs.clear();
        return new Dropped(
                waiting,
                new JobDeskException(
                        JobDeskException.Kind.NO_SESSION,
                        what + ": the session of " + s.application + " ended (" + why
                                + ") while a request of it waited"),
                out);
    }

    private Session live(final String sessionId) {
        checkOpen();
        final Session s = sessionId == null ? null : sessions.get(sessionId);
        if (s == null) {
            throw new JobDeskException(
                    JobDeskException.Kind.NO_SESSION,
                    what + " has no such session: it expired "
                            + "(its lease lapsed and its jobs were removed) or was closed");
        }
        return s;
    }

    private void checkOpen() {
        if (closed) {
            throw new JobDeskException(JobDeskException.Kind.SHUTTING_DOWN, what + " is shutting down");
        }
    }

    private JobDeskException overQuota(final String message) {
        quotaRefusals++;
        return new JobDeskException(JobDeskException.Kind.OVER_QUOTA, message);
    }

    /** How full the switch is, for "full" messages: totals only, no session's or tenant's name. */
    private String fullness() {
        final Need u = used();
        int jobs = 0;
        for (final Session s : sessions.values()) {
            jobs += s.jobs.size();
        }
        return sessions.size() + " sessions hold " + jobs + " of " + description.jobIndices() + " jobs and " + u.slots
                + " of " + description.poolSlots() + " slots; " + queue.size() + " requests wait";
    }

    /** Refuses what waits, removes every session's jobs, then gives up the switch. */
    @Override
    public void close() {
        final List<Request> waiting;
        final List<Dropped> dropped = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            for (final Session s : new ArrayList<>(sessions.values())) {
                dropped.add(drop(s, "the service shut down"));
            }
            closed = true;
            waiting = new ArrayList<>(queue);
            queue.clear();
        }
        dropped.forEach(Dropped::refuse);
        for (final Request r : waiting) {
            r.done.completeExceptionally(
                    new JobDeskException(JobDeskException.Kind.SHUTTING_DOWN, what + " is shutting down"));
        }
        timers.shutdownNow();
        switchWork.shutdown();
        try {
            if (!switchWork.awaitTermination(60, TimeUnit.SECONDS)) {
                LOG.warn("{}: jobs still being removed after 60 s; giving up the switch anyway", what);
                switchWork.shutdownNow();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            switchWork.shutdownNow();
        }
        reads.shutdownNow();
        controller.close();
    }
}

package org.switchml.service;

import org.switchml.protocol.JobSpec;

/**
 * What a shared switch lets one job, one session and one tenant (one application token) hold, and what all
 * jobs together may hold. The job service enforces them: a request over a quota is refused at once
 * ({@link JobDeskException.Kind#OVER_QUOTA}); a request within its quotas that finds the switch full waits for
 * room (docs/deployment.md, "When the switch is full"). Defaults let eight ordinary applications (a job of up
 * to 256 slots each) share a switch of 2048 slots and 64 jobs, and, on a switch that serves several tenants'
 * tokens, keep any one tenant to half of it ({@link #forTenants}).
 *
 * @param slotsPerJob       pool slots one job may ask for
 * @param bytesPerJob       bytes of switch state one job may make the switch allocate ({@link #jobBytes})
 * @param jobsPerSession    jobs one session may hold, waiting requests included
 * @param waitersPerSession requests of one session that may wait for room at once
 * @param sessionsPerToken  sessions open at once with one tenant's token
 * @param sessions          sessions open at once in all (at most 128: each has its own range of job ids)
 * @param tokenSharePercent the share of the switch's slots, jobs, workers and bytes one tenant's sessions may
 *                          hold together, waiting requests included, in percent (100: no share)
 * @param workers           workers of all jobs together; 0: what the switch's worker table holds
 * @param bytes             bytes of switch state of all jobs together
 */
public record Quotas(
        int slotsPerJob,
        long bytesPerJob,
        int jobsPerSession,
        int waitersPerSession,
        int sessionsPerToken,
        int sessions,
        int tokenSharePercent,
        int workers,
        long bytes) {
    private static final long MIB = 1L << 20;

    /** The defaults of a shared switch. */
    public static final Quotas DEFAULT = new Quotas(256, 32 * MIB, 8, 4, 16, JobDesk.ID_RANGES, 50, 0, 256 * MIB);

    /** No quota beyond the switch's own capacity: one application owns the switch (the embedded switch). */
    public static final Quotas NONE = new Quotas(
            JobSpec.MAX_POOL_SIZE,
            Long.MAX_VALUE,
            Integer.MAX_VALUE,
            Integer.MAX_VALUE,
            JobDesk.ID_RANGES,
            JobDesk.ID_RANGES,
            100,
            0,
            Long.MAX_VALUE);

    public Quotas {
        if (slotsPerJob < 1
                || bytesPerJob < 1
                || jobsPerSession < 1
                || waitersPerSession < 1
                || sessionsPerToken < 1
                || sessions < 1
                || sessions > JobDesk.ID_RANGES
                || tokenSharePercent < 1
                || tokenSharePercent > 100
                || workers < 0
                || bytes < 1) {
            throw new IllegalArgumentException("bad quotas: " + slotsPerJob + " slots per job (>= 1), " + bytesPerJob
                    + " bytes per job (>= 1), " + jobsPerSession + " jobs per session (>= 1), " + waitersPerSession
                    + " waiters per session (>= 1), " + sessionsPerToken + " sessions per token (>= 1), " + sessions
                    + " sessions (1.." + JobDesk.ID_RANGES + "), token share " + tokenSharePercent
                    + " % (1..100), " + workers + " workers (>= 0), " + bytes + " bytes (>= 1)");
        }
    }

    /**
     * Bytes of state the software switch allocates for {@code spec}, on its lanes together: per slot and set
     * (two sets, the shadow copies), k sums of 4 bytes, a worker bitmap of 8 bytes per 64 workers, and 11 bytes
     * of count, sequence, use flag and exponent: 2 S (4 k + 8 ceil(n / 64) + 11). A P4 target's registers are
     * allocated once, by its program, but the same bound is applied there so a job fits either the same way.
     */
    public static long jobBytes(final JobSpec spec) {
        return jobBytes(spec.k(), spec.poolSize(), spec.numWorkers());
    }

    /** {@link #jobBytes(JobSpec)} for k, pool size S and n workers. */
    public static long jobBytes(final int k, final int poolSize, final int workers) {
        return 2L * poolSize * (4L * k + 8L * ((workers + 63) / 64) + 11);
    }

    /**
     * These quotas for a switch that serves {@code tenants} tokens: with one token every application is the same
     * tenant, so the token's share and its sessions are the switch's own (no share, as many sessions as in all),
     * and only the per-job, per-session and switch-wide quotas apply.
     */
    public Quotas forTenants(final int tenants) {
        return tenants > 1
                ? this
                : new Quotas(
                        slotsPerJob,
                        bytesPerJob,
                        jobsPerSession,
                        waitersPerSession,
                        sessions,
                        sessions,
                        100,
                        workers,
                        bytes);
    }

    public Quotas withSlotsPerJob(final int n) {
        return new Quotas(
                n,
                bytesPerJob,
                jobsPerSession,
                waitersPerSession,
                sessionsPerToken,
                sessions,
                tokenSharePercent,
                workers,
                bytes);
    }

    public Quotas withJobsPerSession(final int n) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                n,
                waitersPerSession,
                sessionsPerToken,
                sessions,
                tokenSharePercent,
                workers,
                bytes);
    }

    public Quotas withWaitersPerSession(final int n) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                jobsPerSession,
                n,
                sessionsPerToken,
                sessions,
                tokenSharePercent,
                workers,
                bytes);
    }

    public Quotas withSessionsPerToken(final int n) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                jobsPerSession,
                waitersPerSession,
                n,
                sessions,
                tokenSharePercent,
                workers,
                bytes);
    }

    public Quotas withSessions(final int n) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                jobsPerSession,
                waitersPerSession,
                sessionsPerToken,
                n,
                tokenSharePercent,
                workers,
                bytes);
    }

    public Quotas withTokenSharePercent(final int percent) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                jobsPerSession,
                waitersPerSession,
                sessionsPerToken,
                sessions,
                percent,
                workers,
                bytes);
    }

    public Quotas withBytes(final long perJob, final long total) {
        return new Quotas(
                slotsPerJob,
                perJob,
                jobsPerSession,
                waitersPerSession,
                sessionsPerToken,
                sessions,
                tokenSharePercent,
                workers,
                total);
    }

    public Quotas withWorkers(final int total) {
        return new Quotas(
                slotsPerJob,
                bytesPerJob,
                jobsPerSession,
                waitersPerSession,
                sessionsPerToken,
                sessions,
                tokenSharePercent,
                total,
                bytes);
    }
}

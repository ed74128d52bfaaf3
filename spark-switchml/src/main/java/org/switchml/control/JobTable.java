package org.switchml.control;

import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * {@code SwitchMLIngress.job_table}: a job id → {@code set_job}, with the job's resources and the secret
 * its packets must carry. The secret is drawn here, fresh at every registration.
 */
final class JobTable {
    private final TableEntries entries;
    private final SecureRandom secrets = new SecureRandom();

    JobTable(final TableEntries entries) {
        this.entries = entries;
    }

    /** The job's job_table entry. */
    TableEntry entry(final RegisteredJob job) {
        final JobSpec s = job.spec();
        final JobResources r = job.resources();
        final Map<String, Long> params = new HashMap<>();
        params.put(P4Names.P_GENERATION, (long) s.generation());
        params.put(P4Names.P_NUM_WORKERS, (long) s.numWorkers());
        params.put(P4Names.P_POOL_BASE, (long) r.poolBase());
        params.put(P4Names.P_POOL_SIZE, (long) r.poolSize());
        params.put(P4Names.P_MCAST_GRP, (long) r.multicastGroup());
        params.put(P4Names.P_JOB_INDEX, (long) r.jobIndex());
        params.put(P4Names.P_K, (long) s.k());
        params.put(P4Names.P_SECRET, Integer.toUnsignedLong(s.secret()));
        return entries.entry(
                P4Names.JOB_TABLE,
                Map.of(P4Names.F_JOB_ID, Integer.toUnsignedLong(s.jobId())),
                P4Names.SET_JOB,
                params);
    }

    /** A random secret, never the previous registration's (so the new one is always a new session). */
    int freshSecret(final JobSpec previous) {
        while (true) {
            final int secret = secrets.nextInt();
            if (previous == null || secret != previous.secret()) {
                return secret;
            }
        }
    }
}

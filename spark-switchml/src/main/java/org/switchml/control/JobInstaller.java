package org.switchml.control;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Update;

/**
 * Installs and removes jobs as in p4/README.md ("Registering job J"): worker_table and result_table entries
 * per rank and the multicast group first, the job_table entry last, so traffic starts only once the job is
 * complete; removal deletes the job_table entry first, so traffic stops before the rest goes. It allocates
 * each job's pool range, counter index and multicast group among the jobs it registered, and keeps each
 * job's counter cells at registration as the baseline of its counters. Called with the controller's lock held.
 */
final class JobInstaller {
    /** A registered job and its counter cells at registration time. */
    private record Installed(RegisteredJob job, JobCounters baseline) {}

    private final HostTable hosts;
    private final P4InfoIndex p4;
    private final P4RuntimeConnection connection;
    private final JobTable jobTable;
    private final WorkerTable workerTable;
    private final ResultTable resultTable;
    private final CounterReader counters;
    private final Map<Integer, Installed> jobs = new LinkedHashMap<>();
    /** Deletes still owed to the switch per job id (their resources stay allocated until they succeed). */
    private final Map<Integer, List<Update>> leftovers = new LinkedHashMap<>();

    private Target target;
    private ResourceAllocator allocator;

    JobInstaller(
            final ControllerOptions options,
            final P4RuntimeConnection connection,
            final TableEntries entries,
            final CounterReader counters) {
        this.hosts = options.hosts();
        this.p4 = options.p4info();
        this.connection = connection;
        this.jobTable = new JobTable(entries);
        this.workerTable = new WorkerTable(entries);
        this.resultTable = new ResultTable(entries);
        this.counters = counters;
    }

    /** A pipeline was committed: the switch forgot every job, and resources are free again. */
    void pipelineCommitted(final Target committed) {
        target = committed;
        allocator = ResourceAllocator.forPipeline(p4);
        jobs.clear();
        leftovers.clear();
    }

    /** Pool slots, job indices and worker rows of the committed pipeline; zeros before one. */
    int[] capacity() {
        return allocator == null
                ? new int[3]
                : new int[] {
                    allocator.poolSlots(),
                    allocator.jobIndices(),
                    (int) Math.min(Integer.MAX_VALUE, allocator.workerRows())
                };
    }

    /** The target kind of the committed pipeline, or null before one. */
    Target target() {
        return target;
    }

    /** See {@link SwitchController#registerJob(JobSpec, List, JobResources)}. */
    RegisteredJob register(
            final JobSpec requestedSpec, final List<WorkerAttachment> attachments, final JobResources requested) {
        if (target == null) {
            throw new IllegalStateException("cannot register job " + requestedSpec.jobName()
                    + ": no pipeline pushed yet (call setPipeline first)");
        }
        final List<WorkerAttachment> att =
                attachments == null || attachments.isEmpty() ? fromHostTable(requestedSpec) : List.copyOf(attachments);
        validate(requestedSpec, att);
        clearLeftovers();
        final Installed existing = jobs.get(requestedSpec.jobId());
        final JobSpec spec = requestedSpec.withSecret(
                jobTable.freshSecret(existing == null ? null : existing.job().spec()));
        if (existing != null) {
            final JobSpec old = existing.job().spec();
            final boolean sameShape = old.k() == spec.k()
                    && old.poolSize() == spec.poolSize()
                    && old.workers().equals(spec.workers())
                    && existing.job().attachments().equals(att)
                    && (requested == null || requested.equals(existing.job().resources()));
            if (sameShape) {
                final RegisteredJob job = new RegisteredJob(spec, existing.job().resources(), att);
                connection.write(
                        List.of(TableEntries.update(Update.Type.MODIFY, jobTable.entry(job))),
                        "new session of job " + spec.jobName(),
                        false);
                jobs.put(spec.jobId(), new Installed(job, existing.baseline()));
                return job;
            }
            remove(spec.jobId());
        }
        final JobResources res = allocator.allocate(spec, requested);
        final RegisteredJob job = new RegisteredJob(spec, res, att);
        final List<Update> parts = new ArrayList<>();
        try {
            final JobCounters baseline = counters.jobCells(res.jobIndex());
            for (final TableEntry e : workerTable.entries(job)) {
                parts.add(TableEntries.update(Update.Type.INSERT, e));
            }
            for (final TableEntry e : resultTable.entries(job)) {
                parts.add(TableEntries.update(Update.Type.INSERT, e));
            }
            parts.add(TableEntries.update(Update.Type.INSERT, MulticastGroups.group(job)));
            connection.write(parts, "install workers, results and multicast group of job " + spec.jobName(), false);
            connection.write(
                    List.of(TableEntries.update(Update.Type.INSERT, jobTable.entry(job))),
                    "install job " + spec.jobName(),
                    false);
            jobs.put(spec.jobId(), new Installed(job, baseline));
            return job;
        } catch (final RuntimeException e) {
            // Take back whatever part of the job made it, then free its resources. If the switch refuses that too,
            // the resources stay allocated (no later job may collide with what is left) until a later call
            // manages to delete it.
            final List<Update> undo = new ArrayList<>();
            undo.add(TableEntries.update(Update.Type.DELETE, jobTable.entry(job)));
            for (final Update u : parts) {
                undo.add(u.toBuilder().setType(Update.Type.DELETE).build());
            }
            try {
                connection.write(undo, "undo job " + spec.jobName(), true);
                allocator.release(spec.jobId());
            } catch (final RuntimeException undoFailure) {
                e.addSuppressed(undoFailure);
                leftovers.put(spec.jobId(), undo);
            }
            throw e;
        }
    }

    /**
     * Deletes what failed installs and removals left on the switch, and frees its resources once it is gone.
     * What the switch still refuses stays for the next call.
     */
    private void clearLeftovers() {
        for (final Map.Entry<Integer, List<Update>> e : new ArrayList<>(leftovers.entrySet())) {
            try {
                connection.write(
                        e.getValue(), "delete what is left of job " + Integer.toUnsignedString(e.getKey()), true);
                leftovers.remove(e.getKey());
                allocator.release(e.getKey());
            } catch (final RuntimeException stillThere) {
                // Kept, with its resources, for the next call.
            }
        }
    }

    /** Jobs whose entries a failed install or removal left on the switch, with their resources still allocated. */
    int leftovers() {
        return leftovers.size();
    }

    /**
     * Each rank's attachment from the host table: all of them on BMv2 (a worker missing there is an
     * error naming it), none when the table is empty on the software switch, which needs none.
     */
    private List<WorkerAttachment> fromHostTable(final JobSpec spec) {
        if (hosts.isEmpty() && target != Target.BMV2) {
            return List.of();
        }
        final List<WorkerAttachment> out = new ArrayList<>();
        for (int r = 0; r < spec.numWorkers(); r++) {
            final InetSocketAddress w = spec.workers().get(r);
            final WorkerAttachment a = hosts.lookup(w.getAddress());
            if (a == null) {
                if (target != Target.BMV2) {
                    return List.of();
                }
                throw new IllegalArgumentException("job " + spec.jobName() + ": rank " + r + "'s address "
                        + w.getAddress().getHostAddress() + " is not in the switch's host table " + hosts
                        + ": BMv2 needs a worker attachment (switch port, MAC) per rank, from the host table "
                        + "(switchml-controller --hosts FILE, ControllerOptions.withHosts) or given to registerJob");
            }
            out.add(a);
        }
        return out;
    }

    private void validate(final JobSpec spec, final List<WorkerAttachment> att) {
        if (target == Target.BMV2) {
            if (spec.k() != Wire.P4_K) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": k = " + spec.k() + " but the BMv2 "
                        + "pipeline (p4/switchml.p4) aggregates only k = " + Wire.P4_K);
            }
            if (spec.numWorkers() > target.maxWorkers()) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": " + spec.numWorkers() + " workers, "
                        + "but the BMv2 pipeline (p4/switchml.p4) holds at most " + target.maxWorkers()
                        + " per job: its worker bitmap is one 32-bit register cell");
            }
            if (att.size() != spec.numWorkers()) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": BMv2 needs a worker attachment (MAC, "
                        + "switch port) per rank: " + spec.numWorkers() + " ranks, " + att.size() + " attachments");
            }
        } else if (!att.isEmpty() && att.size() != spec.numWorkers()) {
            throw new IllegalArgumentException(
                    "job " + spec.jobName() + ": " + att.size() + " attachments for " + spec.numWorkers() + " ranks");
        }
        for (int r = 0; r < spec.numWorkers(); r++) {
            if (!(spec.workers().get(r).getAddress() instanceof Inet4Address)) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": rank " + r + " address "
                        + spec.workers().get(r) + " is not IPv4 (the switch matches IPv4 sources)");
            }
        }
    }

    /**
     * See {@link SwitchController#removeJob(int)}. Once the job_table entry is gone the job is removed, even when
     * the switch refuses to delete the rest: that is then owed (its resources stay allocated) and retried by
     * later calls, and the refusal is thrown.
     */
    boolean remove(final int jobId) {
        clearLeftovers();
        final Installed installed = jobs.get(jobId);
        if (installed == null) {
            return false;
        }
        final RegisteredJob job = installed.job();
        final String name = job.spec().jobName();
        connection.write(
                List.of(TableEntries.update(Update.Type.DELETE, jobTable.entry(job))), "remove job " + name, true);
        final List<Update> rest = new ArrayList<>();
        for (final TableEntry e : workerTable.entries(job)) {
            rest.add(TableEntries.update(Update.Type.DELETE, e));
        }
        for (final TableEntry e : resultTable.entries(job)) {
            rest.add(TableEntries.update(Update.Type.DELETE, e));
        }
        rest.add(TableEntries.update(Update.Type.DELETE, MulticastGroups.group(job)));
        jobs.remove(jobId);
        try {
            connection.write(rest, "remove workers, results and multicast group of job " + name, true);
        } catch (final RuntimeException e) {
            leftovers.put(jobId, rest);
            throw e;
        }
        allocator.release(jobId);
        return true;
    }

    /** The job as registered, or null. */
    RegisteredJob job(final int jobId) {
        final Installed i = jobs.get(jobId);
        return i == null ? null : i.job();
    }

    /** Every job registered. */
    List<RegisteredJob> jobs() {
        return jobs.values().stream().map(Installed::job).toList();
    }

    /** The job's counters since its registration. */
    JobCounters counters(final int jobId) {
        final Installed installed = jobs.get(jobId);
        if (installed == null) {
            throw new IllegalArgumentException(
                    "job " + Integer.toUnsignedString(jobId) + " is not registered with " + "this controller");
        }
        return counters.jobCells(installed.job().resources().jobIndex()).minus(installed.baseline());
    }
}

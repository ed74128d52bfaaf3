package org.switchml.control;

import io.grpc.Status;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;

/**
 * Hands out the switch resources of jobs: pool slot ranges, per-job counter indices, multicast groups and
 * worker table capacity. Capacities come from the P4Info. Not thread-safe: the controller serialises calls.
 */
final class ResourceAllocator {
    private final int poolSlots;
    private final int jobIndices;
    private final int maxGroup;
    private final long workerCapacity;
    private final Map<Integer, JobResources> live = new LinkedHashMap<>();
    private final Map<Integer, Integer> workers = new LinkedHashMap<>();

    ResourceAllocator(final int poolSlots, final int jobIndices, final int maxGroup, final long workerCapacity) {
        this.poolSlots = poolSlots;
        this.jobIndices = jobIndices;
        this.maxGroup = maxGroup;
        this.workerCapacity = workerCapacity;
    }

    /** Capacities of switchml.p4 as its P4Info states them. */
    static ResourceAllocator forPipeline(final P4InfoIndex p4) {
        final P4InfoIndex.Action setJob = p4.action(P4Names.SET_JOB);
        final int jobs = (int) Math.min(
                p4.table(P4Names.JOB_TABLE).size(),
                p4.counter(P4Names.JOB_PACKETS_IN).size());
        final int indexWidth = setJob.param(P4Names.P_JOB_INDEX).bitwidth();
        final int groupWidth = setJob.param(P4Names.P_MCAST_GRP).bitwidth();
        final long workerRows = Math.min(
                p4.table(P4Names.WORKER_TABLE).size(),
                p4.table(P4Names.RESULT_TABLE).size());
        return new ResourceAllocator(
                (int) p4.registerSize(P4Names.SLOT_OWNER),
                Math.min(jobs, 1 << Math.min(indexWidth, 30)),
                (1 << Math.min(groupWidth, 30)) - 1,
                workerRows);
    }

    int poolSlots() {
        return poolSlots;
    }

    int jobIndices() {
        return jobIndices;
    }

    long workerRows() {
        return workerCapacity;
    }

    /** Resources held by {@code jobId}, or null. */
    JobResources of(final int jobId) {
        return live.get(jobId);
    }

    /**
     * Allocates for {@code spec}: {@code requested} when given (checked against live jobs), else the lowest
     * free job index, the first free slot range that fits S, and the lowest free multicast group.
     */
    JobResources allocate(final JobSpec spec, final JobResources requested) {
        final String job = "job " + spec.jobName();
        if (live.containsKey(spec.jobId())) {
            throw new SwitchControlException(
                    Status.Code.ALREADY_EXISTS, job + " already holds switch resources " + live.get(spec.jobId()));
        }
        if (spec.poolSize() > poolSlots) {
            throw new IllegalArgumentException(
                    job + ": pool size " + spec.poolSize() + " exceeds the switch's " + poolSlots + " pool slots");
        }
        long usedWorkers = 0;
        for (final int n : workers.values()) {
            usedWorkers += n;
        }
        if (usedWorkers + spec.numWorkers() > workerCapacity) {
            throw new SwitchControlException(
                    Status.Code.RESOURCE_EXHAUSTED,
                    job + ": " + spec.numWorkers() + " workers do not fit the worker table (" + usedWorkers + " of "
                            + workerCapacity + " rows in use)");
        }
        final JobResources r;
        if (requested != null) {
            r = checkRequested(spec, requested);
        } else {
            r = new JobResources(freeIndex(job), freePool(job, spec.poolSize()), spec.poolSize(), freeGroup(job));
        }
        live.put(spec.jobId(), r);
        workers.put(spec.jobId(), spec.numWorkers());
        return r;
    }

    private JobResources checkRequested(final JobSpec spec, final JobResources r) {
        final String job = "job " + spec.jobName();
        if (r.poolSize() != spec.poolSize()) {
            throw new IllegalArgumentException(job + ": requested pool size " + r.poolSize()
                    + " differs from the job's pool size " + spec.poolSize());
        }
        if (r.jobIndex() >= jobIndices) {
            throw new IllegalArgumentException(job + ": job index " + r.jobIndex() + " outside 0.." + (jobIndices - 1));
        }
        if ((long) r.poolBase() + r.poolSize() > poolSlots) {
            throw new IllegalArgumentException(
                    job + ": pool " + r.poolRange() + " extends past the switch's " + poolSlots + " slots");
        }
        if (r.multicastGroup() > maxGroup) {
            throw new IllegalArgumentException(
                    job + ": multicast group " + r.multicastGroup() + " outside 1.." + maxGroup);
        }
        for (final Map.Entry<Integer, JobResources> e : live.entrySet()) {
            final JobResources o = e.getValue();
            final String other = "job " + Integer.toUnsignedString(e.getKey());
            if (o.poolOverlaps(r)) {
                throw new SwitchControlException(
                        Status.Code.ALREADY_EXISTS,
                        job + ": pool " + r.poolRange() + " overlaps the pool " + o.poolRange() + " of " + other);
            }
            if (o.jobIndex() == r.jobIndex()) {
                throw new SwitchControlException(
                        Status.Code.ALREADY_EXISTS, job + ": job index " + r.jobIndex() + " is held by " + other);
            }
            if (o.multicastGroup() == r.multicastGroup()) {
                throw new SwitchControlException(
                        Status.Code.ALREADY_EXISTS,
                        job + ": multicast group " + r.multicastGroup() + " is held by " + other);
            }
        }
        return r;
    }

    private int freeIndex(final String job) {
        for (int i = 0; i < jobIndices; i++) {
            final int candidate = i;
            if (live.values().stream().noneMatch(r -> r.jobIndex() == candidate)) {
                return i;
            }
        }
        throw new SwitchControlException(
                Status.Code.RESOURCE_EXHAUSTED,
                job + ": all " + jobIndices + " job indices are in use (at most " + jobIndices + " jobs at once)");
    }

    private int freeGroup(final String job) {
        for (int g = 1; g <= maxGroup; g++) {
            final int candidate = g;
            if (live.values().stream().noneMatch(r -> r.multicastGroup() == candidate)) {
                return g;
            }
        }
        throw new SwitchControlException(Status.Code.RESOURCE_EXHAUSTED, job + ": no free multicast group");
    }

    private int freePool(final String job, final int size) {
        final List<JobResources> ranges = new ArrayList<>(live.values());
        ranges.sort(Comparator.comparingInt(JobResources::poolBase));
        int start = 0;
        for (final JobResources r : ranges) {
            if (r.poolBase() - start >= size) {
                return start;
            }
            start = Math.max(start, r.poolBase() + r.poolSize());
        }
        if (poolSlots - start >= size) {
            return start;
        }
        int free = poolSlots;
        for (final JobResources r : ranges) {
            free -= r.poolSize();
        }
        throw new SwitchControlException(
                Status.Code.RESOURCE_EXHAUSTED,
                job + ": no free run of " + size + " pool slots (" + free + " of " + poolSlots + " free"
                        + (free >= size ? ", in pieces)" : ")"));
    }

    /** Frees what {@code jobId} holds. */
    void release(final int jobId) {
        live.remove(jobId);
        workers.remove(jobId);
    }

    /** Forgets every job (a new pipeline clears the switch). */
    void clear() {
        live.clear();
        workers.clear();
    }
}

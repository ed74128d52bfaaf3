package org.switchml.spark.driver;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.Partition;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobSpec;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;
import org.switchml.spark.registrar.JobRegistrar;

/**
 * Where the tasks of barrier stages meet on the driver: the worker socket every executor announced, and
 * the planner of each running stage attempt, which answers its tasks' hellos.
 */
final class StageRendezvous {
    private final RegistrarLink link;
    private final JobBook jobs;
    private final ShardHosts shardHosts;
    /** Executors Spark removed (bounded: the most recent ones), for the messages of the stages they were in. */
    private final Set<String> lost = Collections.newSetFromMap(new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<String, Boolean> e) {
            return size() > 1024;
        }
    });
    /** The worker socket of every executor that announced one (its start), by executor id. */
    private final Map<String, Rendezvous.Worker> workers = new ConcurrentHashMap<>();

    private final Map<String, StagePlanner> stages = new ConcurrentHashMap<>();

    StageRendezvous(final RegistrarLink link, final JobBook jobs, final ShardHosts shardHosts) {
        this.link = link;
        this.jobs = jobs;
        this.shardHosts = shardHosts;
    }

    /**
     * Announces a barrier stage before it is submitted: its tasks will say hello, and the plan is made
     * when all {@code tasks} have.
     *
     * @param preferred  per source partition, the executor id holding it (cached), or null
     * @param partitions the source partitions, handed to each task as the plan assigns them
     * @param slots      the task slots of the cluster
     * @param localShortcut {@code spark.switchml.localShortcut} of the call
     */
    void beginStage(
            final TaskSettings s,
            final String[] preferred,
            final Partition[] partitions,
            final int slots,
            final boolean localShortcut) {
        final StagePlanner p = new StagePlanner(s, preferred, partitions, link, jobs, localShortcut, shardHosts);
        stages.put(s.stageKey(), p);
        // The stage takes every task slot: every executor will run a task of it, so its job can be installed
        // now, while Spark schedules the tasks, instead of after they gather.
        if (s.tasks() == slots && !workers.isEmpty()) {
            p.installAhead(new ArrayList<>(new TreeMap<>(workers).values()));
        }
    }

    /**
     * Forgets a stage (after its job ended); returns its driver-side profile: the time from the first
     * to the last task's hello, and the job's installation on the switch (ns), or null.
     */
    long[] endStage(final TaskSettings s) {
        final StagePlanner p = stages.remove(s.stageKey());
        if (p == null) {
            return null;
        }
        // The parts on extra shard hosts go with the stage attempt (the driver's switch keeps its part until the
        // job is removed, as a job on one switch does).
        for (final Map.Entry<JobRegistrar, JobSpec> part : p.extraParts()) {
            if (part.getKey() != link.current()) {
                final JobRegistrar r = part.getKey();
                final JobSpec spec = part.getValue();
                jobs.onRegistrationThread(() -> {
                    try {
                        r.counters(spec.jobId()).ifPresent(c -> jobs.addCounters(s.jobId(), spec.generation(), c));
                        r.remove(spec.jobId());
                    } catch (final RuntimeException e) {
                        LoggerFactory.getLogger(StageRendezvous.class)
                                .debug(
                                        "spark-switchml: cannot remove job {} from an extra shard host: {}",
                                        spec.jobName(),
                                        e.toString());
                    }
                    return null;
                });
            }
        }
        return p.profile();
    }

    /** An executor installed its part of sharded stage {@code m.stage()}. */
    void shardInstalled(final Rendezvous.ShardInstalled m) {
        final StagePlanner p = stages.get(m.stage());
        if (p != null) {
            p.shardInstalled(m.rank());
        }
    }

    /** The executors (and shards) of a stage that Spark lost, or empty. */
    String lostShards(final String stage) {
        final StagePlanner p = stages.get(stage);
        if (p == null) {
            return "";
        }
        synchronized (lost) {
            return p.lostShards(Set.copyOf(lost));
        }
    }

    /** The executors (and shards) of a stage that are not among {@code live}, or empty. */
    String goneShards(final String stage, final Set<String> live) {
        final StagePlanner p = stages.get(stage);
        return p == null ? "" : p.goneShards(live);
    }

    /** The shard executor {@code executorId} announced, or null. */
    String shardOf(final String executorId) {
        final Rendezvous.Worker w = workers.get(executorId);
        return w == null ? null : w.shard();
    }

    /** An executor announced its worker socket. */
    void addWorker(final Rendezvous.Worker w) {
        workers.put(w.executorId(), w);
    }

    /** An executor is gone. */
    void removeWorker(final String executorId) {
        workers.remove(executorId);
        synchronized (lost) {
            lost.add(executorId);
        }
    }

    /** A task's hello: its plan, pending, or an error. */
    Rendezvous.PlanReply hello(final Rendezvous.Hello h) {
        final StagePlanner p = stages.get(h.stage());
        if (p == null) {
            return Rendezvous.PlanReply.failed("stage " + h.stage() + " is not running (a stale attempt?)", false);
        }
        return p.hello(h);
    }

    /** A task streams to the switch. */
    void streaming(final Rendezvous.Streaming st) {
        final StagePlanner p = stages.get(st.stage());
        if (p != null) {
            p.streaming(st.rank());
        }
    }

    /** Whether every worker of the stage streams. */
    boolean allStreaming(final Rendezvous.AllStreaming q) {
        final StagePlanner p = stages.get(q.stage());
        return p != null && p.allStreaming();
    }
}

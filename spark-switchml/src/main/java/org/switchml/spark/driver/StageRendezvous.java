package org.switchml.spark.driver;

import org.switchml.spark.rpc.Rendezvous;
import org.switchml.spark.rpc.TaskSettings;
import org.apache.spark.Partition;

import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the tasks of barrier stages meet on the driver: the worker socket every executor announced, and
 * the planner of each running stage attempt, which answers its tasks' hellos.
 */
final class StageRendezvous {
    private final RegistrarLink link;
    private final JobBook jobs;
    /** The worker socket of every executor that announced one (its start), by executor id. */
    private final Map<String, Rendezvous.Worker> workers = new ConcurrentHashMap<>();
    private final Map<String, StagePlanner> stages = new ConcurrentHashMap<>();

    StageRendezvous(final RegistrarLink link, final JobBook jobs) {
        this.link = link;
        this.jobs = jobs;
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
    void beginStage(final TaskSettings s, final String[] preferred, final Partition[] partitions, final int slots,
                    final boolean localShortcut) {
        final StagePlanner p = new StagePlanner(s, preferred, partitions, link, jobs, localShortcut);
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
        return p == null ? null : p.profile();
    }

    /** An executor announced its worker socket. */
    void addWorker(final Rendezvous.Worker w) {
        workers.put(w.executorId(), w);
    }

    /** An executor is gone. */
    void removeWorker(final String executorId) {
        workers.remove(executorId);
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

package org.switchml.spark.driver;

import org.apache.spark.Partition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.registrar.JobRegistrar;
import org.switchml.spark.rpc.Endpoints;
import org.switchml.spark.rpc.Rendezvous;
import org.switchml.spark.rpc.TaskSettings;
import org.switchml.protocol.JobSpec;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Collects the hellos of one stage attempt, makes the plan when the last one arrives, and gives it
 * out once the stage's job is installed on the switch, so the tasks stream at once and no packet
 * reaches the switch before its job. The job is installed ahead, while the tasks start, when the
 * stage will run on every executor; otherwise (or when the tasks landed elsewhere) after the hellos.
 * A stage whose tasks all run in one executor needs no job when {@code spark.switchml.localShortcut} is
 * on: its plan says the executor sums in memory, and it is given out at once.
 */
final class StagePlanner {
    private static final Logger LOG = LoggerFactory.getLogger(StagePlanner.class);

    private final TaskSettings settings;
    private final String[] preferred;
    private final Partition[] partitions;
    private final RegistrarLink link;
    private final JobBook jobs;
    private final Rendezvous.Hello[] hellos;
    /** Whether a stage whose tasks all run in one executor is summed there, without the switch. */
    private final boolean localShortcut;
    private int count;
    private volatile Rendezvous.PlanReply reply = Rendezvous.PlanReply.PENDING;
    /** The job installed ahead (its executors in rank order, and its installation), or null. */
    private List<String> aheadOrder;
    private CompletableFuture<JobSpec> ahead;
    /** For the stage's profile: first and last hello, and the job's installation (ns). */
    private long firstHelloNs;
    private long lastHelloNs;
    private volatile long installNs;
    private final Set<Integer> streaming = ConcurrentHashMap.newKeySet();

    /**
     * @param preferred  per source partition, the executor id holding it (cached), or null
     * @param partitions the source partitions, handed to each task as the plan assigns them
     * @param localShortcut {@code spark.switchml.localShortcut} of the call
     */
    StagePlanner(final TaskSettings settings, final String[] preferred, final Partition[] partitions,
                 final RegistrarLink link, final JobBook jobs, final boolean localShortcut) {
        this.settings = settings;
        this.preferred = preferred;
        this.partitions = partitions;
        this.link = link;
        this.jobs = jobs;
        this.hellos = new Rendezvous.Hello[settings.tasks()];
        this.localShortcut = localShortcut;
    }

    /** The task of {@code rank} streams to the switch. */
    void streaming(final int rank) {
        streaming.add(rank);
    }

    /** Whether every worker of the plan streams. */
    boolean allStreaming() {
        final Rendezvous.Plan p = reply.plan();
        return p != null && streaming.size() >= p.workers();
    }

    /**
     * The stage's driver-side profile: the time from the first to the last task's hello, and the job's
     * installation on the switch (ns).
     */
    synchronized long[] profile() {
        return new long[] {lastHelloNs - firstHelloNs, installNs};
    }

    /** Installs the job for {@code known} executors (rank = position) in the background. */
    synchronized void installAhead(final List<Rendezvous.Worker> known) {
        final JobRegistrar r = link.current();
        // One executor needs no job when it sums in memory.
        if (r == null || known.size() > r.maxWorkers() || (localShortcut && known.size() == 1)) {
            return;
        }
        final Rendezvous.Hello[] asHellos = new Rendezvous.Hello[known.size()];
        for (int i = 0; i < asHellos.length; i++) {
            final Rendezvous.Worker w = known.get(i);
            asHellos[i] = new Rendezvous.Hello(settings.stageKey(), i, w.executorId(), w.endpoint(), w.mtu());
        }
        final Rendezvous.Plan shape;
        try {
            shape = StagePlans.make(r.address().toString(), settings, asHellos, new String[0], r.requiredK(),
                    r.dataplaneMtu());
        } catch (final RuntimeException e) {
            return; // planned again, with its error, when the tasks say hello
        }
        aheadOrder = known.stream().map(Rendezvous.Worker::executorId).toList();
        ahead = install(specOf(shape));
    }

    /** A task's hello: the plan with its partitions once the job is installed, else pending or an error. */
    Rendezvous.PlanReply hello(final Rendezvous.Hello h) {
        synchronized (this) {
            if (h.task() < 0 || h.task() >= hellos.length) {
                return Rendezvous.PlanReply.failed("task " + h.task() + " outside 0.." + (hellos.length - 1), false);
            }
            if (hellos[h.task()] == null) {
                hellos[h.task()] = h;
                if (count == 0) {
                    firstHelloNs = System.nanoTime();
                }
                if (++count == hellos.length) {
                    lastHelloNs = System.nanoTime();
                    plan();
                }
            }
        }
        final Rendezvous.PlanReply r = reply;
        if (r.plan() == null) {
            return r;
        }
        final int[] mine = r.plan().partitions()[h.task()];
        final Partition[] parts = new Partition[mine.length];
        for (int i = 0; i < mine.length; i++) {
            parts[i] = partitions[mine[i]];
        }
        return new Rendezvous.PlanReply(r.plan(), null, false, parts);
    }

    /** Makes the plan and, unless the job installed ahead fits it, installs its job; replies once installed. */
    private void plan() {
        for (final Rendezvous.Hello h : hellos) {
            if (h.endpoint() == null) {
                reply = Rendezvous.PlanReply.failed("executor " + h.executorId() + " has no worker socket (see its log)", true);
                return;
            }
        }
        final JobRegistrar r = link.current();
        if (r == null) {
            reply = Rendezvous.PlanReply.failed(link.unreachableReason(), true);
            return;
        }
        final long executors = Arrays.stream(hellos).map(Rendezvous.Hello::executorId).distinct().count();
        if (executors > r.maxWorkers()) {
            // The switch cannot hold this job, but treeAggregate can: the fallback applies.
            reply = Rendezvous.PlanReply.failed("the stage's tasks run on " + executors + " executors, but switch "
                    + link.switchName() + " holds at most " + r.maxWorkers() + " workers per job (one per executor)",
                    true);
            return;
        }
        final Rendezvous.Plan plan;
        try {
            plan = StagePlans.make(r.address().toString(), settings, hellos, preferred, r.requiredK(), r.dataplaneMtu(),
                    aheadOrder);
        } catch (final RuntimeException e) {
            reply = Rendezvous.PlanReply.failed(e.getMessage(), false);
            return;
        }
        if (localShortcut && plan.workers() == 1) {
            // k still comes from the registrar and the MTUs, as it would for the switch: it sets the blocks
            // whose exponents the quantization uses, and so the bits of the sum.
            reply = new Rendezvous.PlanReply(withJob(plan, 0, true), null, false, null);
            return;
        }
        final JobSpec spec = specOf(plan);
        final CompletableFuture<JobSpec> installed = ahead == null ? install(spec) : reuseOrReinstall(r, spec);
        installed.whenComplete((done, failure) -> {
            if (failure != null) {
                final Throwable c = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                reply = Rendezvous.PlanReply.failed("registration of job " + spec.jobName() + " on switch "
                        + link.switchName() + " failed: " + c.getMessage(), true);
                return;
            }
            reply = new Rendezvous.PlanReply(withJob(plan, done.secret(), false), null, false, null);
        });
    }

    /** {@code plan} with the secret of its installed job, or in memory. */
    private static Rendezvous.Plan withJob(final Rendezvous.Plan plan, final int secret, final boolean inMemory) {
        return new Rendezvous.Plan(plan.switchAddress(), plan.jobId(), plan.generation(), secret, plan.k(),
                plan.poolSize(), plan.endpoints(), plan.rankOfTask(), plan.localIndex(), plan.localCount(),
                plan.partitions(), inMemory);
    }

    /**
     * The job installed ahead when the tasks ran where expected (same endpoints in the same order, same k
     * and pool); else that job is taken back first (same id and generation) and {@code spec} installed.
     */
    private CompletableFuture<JobSpec> reuseOrReinstall(final JobRegistrar r, final JobSpec spec) {
        return ahead.handle((done, failure) -> done).thenCompose(done -> {
            if (done != null && sameShape(done, spec)) {
                return CompletableFuture.completedFuture(done);
            }
            LOG.info("spark-switchml: job {} was installed ahead as {} but the stage runs as {}; installing it again",
                    spec.jobName(), done, spec);
            return jobs.onRegistrationThread(() -> {
                if (done != null) {
                    jobs.removeNow(r, spec.jobId());
                }
                return null;
            }).thenCompose(x -> install(spec));
        });
    }

    /** Installs {@code spec} on the registration thread; completes with the spec as installed. */
    private CompletableFuture<JobSpec> install(final JobSpec spec) {
        return jobs.onRegistrationThread(() -> {
            final long t0 = System.nanoTime();
            final JobSpec done = jobs.register(spec);
            installNs = System.nanoTime() - t0;
            return done;
        });
    }

    private static JobSpec specOf(final Rendezvous.Plan plan) {
        final List<InetSocketAddress> w = new ArrayList<>();
        for (final String e : plan.endpoints()) {
            w.add(Endpoints.parseEndpoint(e));
        }
        return new JobSpec(plan.jobId(), plan.generation(), plan.k(), plan.poolSize(), w);
    }

    private static boolean sameShape(final JobSpec a, final JobSpec b) {
        return a.jobId() == b.jobId() && a.generation() == b.generation() && a.k() == b.k()
                && a.poolSize() == b.poolSize() && a.workers().equals(b.workers());
    }
}

package org.switchml.spark.driver;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.spark.Partition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.ShardedJob;
import org.switchml.spark.messages.Endpoints;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;
import org.switchml.spark.registrar.JobRegistrar;

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
    private final StreamingStarts streaming = new StreamingStarts();

    /**
     * @param preferred  per source partition, the executor id holding it (cached), or null
     * @param partitions the source partitions, handed to each task as the plan assigns them
     * @param localShortcut {@code spark.switchml.localShortcut} of the call
     */
    StagePlanner(
            final TaskSettings settings,
            final String[] preferred,
            final Partition[] partitions,
            final RegistrarLink link,
            final JobBook jobs,
            final boolean localShortcut,
            final ShardHosts shardHosts) {
        this.settings = settings;
        this.preferred = preferred;
        this.partitions = partitions;
        this.link = link;
        this.jobs = jobs;
        this.hellos = new Rendezvous.Hello[settings.tasks()];
        this.localShortcut = localShortcut;
        this.shardHosts = shardHosts;
    }

    private final ShardHosts shardHosts;
    /** Of a sharded stage: which ranks installed their shard's part, and the parts the driver installed. */
    private boolean[] shardInstalled;

    private int shardsInstalled;
    private final List<Map.Entry<JobRegistrar, JobSpec>> extraParts = new ArrayList<>();
    /** Per rank of a sharded stage: the executor and its shard, for a failure's message. */
    private volatile String[] rankExecutors;

    private volatile String[] rankShards;

    /** The task of {@code rank} streams to the switch. */
    void streaming(final int rank) {
        streaming.started(rank, System.nanoTime());
    }

    /**
     * Whether every worker of the plan streams, the last of them for a result timeout already: only then is a
     * first call's silence the switch's.
     */
    boolean allStreaming() {
        final Rendezvous.Plan p = reply.plan();
        return p != null
                && streaming.allStreamingFor(
                        p.workers(), TimeUnit.MILLISECONDS.toNanos(settings.resultTimeoutMs()), System.nanoTime());
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
        if (shardHosts.onExecutors() && settings.mayShard() && known.size() >= 2) {
            return; // the executors' shards install their own parts once the plan is made
        }
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
            shape = StagePlans.make(
                    r.address().toString(), settings, asHellos, new String[0], r.requiredK(), r.dataplaneMtu());
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
        return new Rendezvous.PlanReply(r.plan(), null, false, parts, r.install());
    }

    /** An executor installed its shard's part of the sharded plan; the plan is final once every one has. */
    void shardInstalled(final int rank) {
        synchronized (this) {
            final Rendezvous.PlanReply r = reply;
            if (shardInstalled == null
                    || !r.install()
                    || rank < 0
                    || rank >= shardInstalled.length
                    || shardInstalled[rank]) {
                return;
            }
            shardInstalled[rank] = true;
            if (++shardsInstalled == shardInstalled.length) {
                installNs = System.nanoTime() - installStartNs;
                reply = new Rendezvous.PlanReply(r.plan(), null, false, null, false);
            }
        }
    }

    /**
     * The executors and shards of a sharded stage that Spark lost ({@code lost}: executor ids it removed), for a
     * failure's message; empty when none.
     */
    String lostShards(final Set<String> lost) {
        return shardsWhere(lost::contains);
    }

    /** As {@link #lostShards}, for the executors of the stage that are not among {@code live}. */
    String goneShards(final Set<String> live) {
        return shardsWhere(e -> !live.contains(e));
    }

    private String shardsWhere(final java.util.function.Predicate<String> gone) {
        final String[] ex = rankExecutors;
        final String[] sh = rankShards;
        if (ex == null) {
            return "";
        }
        final StringBuilder sb = new StringBuilder();
        for (int r = 0; r < ex.length; r++) {
            if (gone.test(ex[r])) {
                sb.append(sb.length() == 0 ? "" : ", ")
                        .append("executor ")
                        .append(ex[r])
                        .append(" (rank ")
                        .append(r)
                        .append(") with its shard ")
                        .append(sh[r]);
            }
        }
        return sb.toString();
    }

    /** Why {@code f} failed. */
    private static String reason(final CompletableFuture<?> f) {
        try {
            f.join();
            return "no failure";
        } catch (final CompletionException e) {
            final Throwable c = e.getCause() == null ? e : e.getCause();
            return c.getMessage() == null ? c.toString() : c.getMessage();
        }
    }

    /** The parts of a sharded stage the driver installed on extra shard hosts, to remove when the stage ends. */
    synchronized List<Map.Entry<JobRegistrar, JobSpec>> extraParts() {
        return List.copyOf(extraParts);
    }

    private long installStartNs;

    /**
     * Plans a stage of two or more executors on shards: one on each executor (its part installed by the executor
     * itself, with the secret drawn here) and one on each extra shard host that answers (installed here, on the
     * registration thread, first). The reply says install until every executor installed its part.
     */
    private void planSharded() {
        final List<Map.Entry<ShardHosts.Extra, JobRegistrar>> extras = shardHosts.available();
        int mtu = 0;
        for (final Map.Entry<ShardHosts.Extra, JobRegistrar> e : extras) {
            final int m = e.getValue().dataplaneMtu();
            if (m > 0) {
                mtu = mtu == 0 ? m : Math.min(mtu, m);
            }
        }
        final Rendezvous.Plan shape;
        try {
            shape = StagePlans.make("", settings, hellos, preferred, 0, mtu);
        } catch (final RuntimeException e) {
            reply = Rendezvous.PlanReply.failed(e.getMessage(), false);
            return;
        }
        final int n = shape.workers();
        final String[] executorOfRank = new String[n];
        final String[] shardOfRank = new String[n];
        for (int t = 0; t < hellos.length; t++) {
            executorOfRank[shape.rankOfTask()[t]] = hellos[t].executorId();
            shardOfRank[shape.rankOfTask()[t]] = hellos[t].shard();
        }
        final int[] weights = ShardedJob.linkBalancedWeights(n, extras.size());
        final int[] pools = ShardedJob.pools(shape.shards()[0].poolSize(), weights, StagePlans.MIN_SHARD_POOL);
        final Rendezvous.Shard[] shards = new Rendezvous.Shard[n + extras.size()];
        for (int r = 0; r < n; r++) {
            shards[r] = new Rendezvous.Shard(
                    shardOfRank[r],
                    settings.jobId(),
                    settings.generation(),
                    JobSpec.randomSecret(),
                    pools[r],
                    weights[r],
                    r);
        }
        final List<InetSocketAddress> workers = new ArrayList<>();
        for (final String e : shape.endpoints()) {
            workers.add(Endpoints.parseEndpoint(e));
        }
        final List<CompletableFuture<JobSpec>> installs = new ArrayList<>();
        for (int i = 0; i < extras.size(); i++) {
            final ShardHosts.Extra extra = extras.get(i).getKey();
            final JobRegistrar r = extras.get(i).getValue();
            final int id = extra.driver() ? settings.jobId() : r.jobIds().id(Integer.toUnsignedLong(settings.jobId()));
            final JobSpec spec = new JobSpec(id, settings.generation(), shape.k(), pools[n + i], workers);
            shards[n + i] = new Rendezvous.Shard(
                    r.address().toString(), id, settings.generation(), 0, pools[n + i], weights[n + i], -1);
            installs.add(jobs.onRegistrationThread(() -> {
                final JobSpec done = extra.driver() ? jobs.register(spec) : r.register(spec);
                synchronized (this) {
                    extraParts.add(Map.entry(r, done));
                }
                return done;
            }));
        }
        rankExecutors = executorOfRank;
        rankShards = shardOfRank;
        shardInstalled = new boolean[n];
        installStartNs = System.nanoTime();
        jobs.recordShardedGeneration(settings.jobId(), settings.generation(), n);
        CompletableFuture.allOf(installs.toArray(new CompletableFuture<?>[0])).whenComplete((v, failure) -> {
            synchronized (this) {
                if (failure != null) {
                    // An extra host that refused or did not answer is left out until it answers again, and the
                    // stage is planned without it: the executors have not installed anything yet.
                    for (int i = 0; i < installs.size(); i++) {
                        if (installs.get(i).isCompletedExceptionally()) {
                            final Map.Entry<ShardHosts.Extra, JobRegistrar> e = extras.get(i);
                            final String why = reason(installs.get(i));
                            LOG.warn(
                                    "spark-switchml: stage {}: {} could not install its part ({}); the stage runs "
                                            + "without it",
                                    settings.stageKey(),
                                    e.getKey().name(),
                                    why);
                            e.getKey().link().lost(e.getValue(), why);
                        }
                    }
                    extraParts.clear();
                    planSharded();
                    return;
                }
                for (int i = 0; i < installs.size(); i++) {
                    shards[n + i] =
                            shards[n + i].withSecret(installs.get(i).join().secret());
                }
                reply = new Rendezvous.PlanReply(shape.withShards(shards, false), null, false, null, true);
            }
        });
    }

    /** Makes the plan and, unless the job installed ahead fits it, installs its job; replies once installed. */
    private void plan() {
        for (final Rendezvous.Hello h : hellos) {
            if (h.endpoint() == null) {
                reply = Rendezvous.PlanReply.failed(
                        "executor " + h.executorId() + " has no worker socket (see its log)", true);
                return;
            }
        }
        final long executors = Arrays.stream(hellos)
                .map(Rendezvous.Hello::executorId)
                .distinct()
                .count();
        if (shardHosts.onExecutors() && settings.mayShard() && executors >= 2) {
            if (Arrays.stream(hellos).allMatch(h -> h.shard() != null)) {
                planSharded();
                return;
            }
            LOG.warn(
                    "spark-switchml: stage {}: an executor hosts no switch shard (see its log); the stage runs on "
                            + "the driver's switch",
                    settings.stageKey());
        }
        final JobRegistrar r = link.current();
        if (r == null) {
            reply = Rendezvous.PlanReply.failed(link.unreachableReason(), true);
            return;
        }
        if (executors > r.maxWorkers()) {
            // The switch cannot hold this job, but treeAggregate can: the fallback applies.
            reply = Rendezvous.PlanReply.failed(
                    "the stage's tasks run on " + executors + " executors, but switch " + link.switchName()
                            + " holds at most " + r.maxWorkers() + " workers per job (one per executor)",
                    true);
            return;
        }
        final Rendezvous.Plan plan;
        try {
            plan = StagePlans.make(
                    r.address().toString(), settings, hellos, preferred, r.requiredK(), r.dataplaneMtu(), aheadOrder);
        } catch (final RuntimeException e) {
            reply = Rendezvous.PlanReply.failed(e.getMessage(), false);
            return;
        }
        if (localShortcut && plan.workers() == 1) {
            // k still comes from the registrar and the MTUs, as it would for the switch: it sets the blocks
            // whose exponents the quantization uses, and so the bits of the sum.
            reply = new Rendezvous.PlanReply(withJob(plan, 0, true), null, false, null, false);
            return;
        }
        final JobSpec spec = specOf(plan);
        final CompletableFuture<JobSpec> installed = ahead == null ? install(spec) : reuseOrReinstall(r, spec);
        installed.whenComplete((done, failure) -> {
            if (failure != null) {
                final Throwable c = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                reply = Rendezvous.PlanReply.failed(
                        "registration of job " + spec.jobName() + " on switch " + link.switchName() + " failed: "
                                + c.getMessage(),
                        true);
                return;
            }
            reply = new Rendezvous.PlanReply(withJob(plan, done.secret(), false), null, false, null, false);
        });
    }

    /** {@code plan} with the secret of its installed job, or in memory. */
    private static Rendezvous.Plan withJob(final Rendezvous.Plan plan, final int secret, final boolean inMemory) {
        return plan.withShards(new Rendezvous.Shard[] {plan.shards()[0].withSecret(secret)}, inMemory);
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
            LOG.info(
                    "spark-switchml: job {} was installed ahead as {} but the stage runs as {}; installing it again",
                    spec.jobName(),
                    done,
                    spec);
            return jobs.onRegistrationThread(() -> {
                        if (done != null) {
                            jobs.removeNow(r, spec.jobId());
                        }
                        return null;
                    })
                    .thenCompose(x -> install(spec));
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
        return new JobSpec(plan.jobId(), plan.generation(), plan.k(), plan.shards()[0].poolSize(), w);
    }

    private static boolean sameShape(final JobSpec a, final JobSpec b) {
        return a.jobId() == b.jobId()
                && a.generation() == b.generation()
                && a.k() == b.k()
                && a.poolSize() == b.poolSize()
                && a.workers().equals(b.workers());
    }
}

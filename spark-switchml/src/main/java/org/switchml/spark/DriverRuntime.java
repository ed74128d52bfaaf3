package org.switchml.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;
import org.switchml.transport.FaultPlan;

import java.lang.reflect.Constructor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The driver side of spark-switchml in one JVM: the job registrar (embedded or external switch), the
 * rendezvous of barrier stages, job ids, and counters. Created by {@link SwitchMLPlugin}'s driver
 * plugin, or automatically for a local master without the plugin.
 *
 * <p>A switch that cannot be reached when the runtime starts does not stop the application: the runtime
 * logs one warning naming what was tried, and every aggregation first tries to reach it again; until it
 * answers, {@code spark.switchml.fallback} applies.
 */
public final class DriverRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DriverRuntime.class);
    private static final Object LOCK = new Object();
    /** Set by the driver plugin for the life of its SparkContext. */
    private static DriverRuntime pluginRuntime;
    /** Started on demand for a local master without the plugin. */
    private static DriverRuntime autoRuntime;
    /** How often an unreachable switch is tried again, at most. */
    private static final long RETRY_UNREACHABLE_MS = 2_000;

    private final Supplier<JobRegistrar> factory;
    private final String what;
    private volatile JobRegistrar registrar;
    private volatile String unreachable;
    private long lastAttemptNs;
    private final SwitchAddress configuredAddress;
    private final AtomicInteger nextJobId;
    private final AtomicLong fallbacks = new AtomicLong();
    private final Map<Integer, List<Integer>> generations = new ConcurrentHashMap<>();
    private final Map<Integer, JobCounters> finalCounters = new ConcurrentHashMap<>();
    private final Map<Integer, java.util.concurrent.Future<?>> removals = new ConcurrentHashMap<>();
    private final Map<String, StagePlanner> stages = new ConcurrentHashMap<>();
    /** Progress listeners of running replicated loops, and the one thread that calls them in order. */
    private final Map<Long, ReplicatedLoop.Progress> progressListeners = new ConcurrentHashMap<>();
    private final AtomicLong nextProgressId = new AtomicLong(new SplittableRandom().nextLong() | 1);
    private final ExecutorService progressThread = Executors.newSingleThreadExecutor(r -> {
        final Thread t = new Thread(r, "switchml-progress");
        t.setDaemon(true);
        return t;
    });

    /** Registers a loop's listener; returns its id (never 0). */
    long addProgress(final ReplicatedLoop.Progress p) {
        long id;
        do {
            id = nextProgressId.getAndIncrement();
        } while (id == 0);
        progressListeners.put(id, p);
        return id;
    }

    /** Forgets a loop's listener, after the calls already queued for it. */
    void removeProgress(final long id) {
        try {
            progressThread.submit(() -> progressListeners.remove(id)).get(10, TimeUnit.SECONDS);
        } catch (final Exception e) {
            progressListeners.remove(id);
        }
    }

    /** The worker socket of every executor that announced one (its start), by executor id. */
    private final Map<String, Rendezvous.Worker> workers = new ConcurrentHashMap<>();
    /** Registrations run here, off the tasks' critical path and off Spark's RPC threads. */
    private final ExecutorService registrations = Executors.newSingleThreadExecutor(r -> {
        final Thread t = new Thread(r, "switchml-register");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;
    /** Settings and host for the executor runtime of a local master without the plugin. */
    private final Map<String, String> conf;
    private final String driverHost;
    private ExecutorRuntime localExecutor;

    /** A runtime around a registrar that is already up (tests, embedded uses). */
    DriverRuntime(final JobRegistrar registrar) {
        this(() -> registrar, "switch " + registrar.address(), registrar.address(), Map.of(), "127.0.0.1");
    }

    private DriverRuntime(final Supplier<JobRegistrar> factory, final String what, final SwitchAddress address,
                          final Map<String, String> conf, final String driverHost) {
        this.factory = factory;
        this.what = what;
        this.configuredAddress = address;
        this.conf = Map.copyOf(conf);
        this.driverHost = driverHost == null || driverHost.isEmpty() ? "127.0.0.1" : driverHost;
        // Random base: two applications sharing an external switch should not pick the same ids.
        this.nextJobId = new AtomicInteger(new SplittableRandom().nextInt(1 << 30));
        connect();
        if (registrar == null) {
            LOG.warn("spark-switchml: {} is unreachable ({}); aggregations fall back per {} until it answers",
                    what, unreachable, SwitchMLConfig.FALLBACK.key());
        }
    }

    /**
     * Builds the runtime the settings ask for: an external switch (through P4Runtime or a registrar class),
     * or an embedded software switch. A bad setting throws; a switch that cannot be reached does not.
     */
    static DriverRuntime create(final Function<String, String> settings, final String driverHost,
                                final Map<String, String> all) {
        final String external = SwitchMLConfig.SWITCH_ADDRESS.from(settings);
        final String registrarClass = SwitchMLConfig.REGISTRAR.from(settings);
        if (!external.isEmpty()) {
            final SwitchAddress address = SwitchAddress.parse(external);
            if (registrarClass.isEmpty()) {
                final String p4rt = SwitchMLConfig.P4RUNTIME_ADDRESS.from(settings);
                if (p4rt.isEmpty()) {
                    throw new IllegalArgumentException(SwitchMLConfig.SWITCH_ADDRESS.key() + "=" + external
                            + " names an external switch, so " + SwitchMLConfig.P4RUNTIME_ADDRESS.key()
                            + " (its P4Runtime server) or " + SwitchMLConfig.REGISTRAR.key()
                            + " (a JobRegistrar class) must say how to install jobs on it");
                }
                return new DriverRuntime(() -> new P4RuntimeRegistrar(address, all),
                        "the P4Runtime server " + p4rt + " of switch " + address, address, all, driverHost);
            }
            final Constructor<?> ctor;
            try {
                final Class<?> c = Class.forName(registrarClass, true, Thread.currentThread().getContextClassLoader());
                if (!JobRegistrar.class.isAssignableFrom(c)) {
                    throw new ClassCastException(c.getName() + " does not implement " + JobRegistrar.class.getName());
                }
                ctor = c.getConstructor(SwitchAddress.class, Map.class);
            } catch (final ReflectiveOperationException | ClassCastException e) {
                throw new IllegalArgumentException(SwitchMLConfig.REGISTRAR.key() + "=" + registrarClass
                        + ": cannot create a JobRegistrar with a public (SwitchAddress, Map) constructor: " + e, e);
            }
            return new DriverRuntime(() -> {
                try {
                    return (JobRegistrar) ctor.newInstance(address, all);
                } catch (final ReflectiveOperationException e) {
                    throw new IllegalStateException(registrarClass + ": " + (e.getCause() == null ? e : e.getCause()), e);
                }
            }, "switch " + address + " (registrar " + registrarClass + ")", address, all, driverHost);
        }
        String host = SwitchMLConfig.SWITCH_HOST.from(settings);
        if (host.isEmpty()) {
            host = driverHost == null || driverHost.isEmpty() ? "127.0.0.1" : driverHost;
        }
        final int lanes = SwitchMLConfig.SWITCH_LANES.from(settings);
        final String bindHost = host;
        return new DriverRuntime(() -> {
            final SoftwareSwitch sw = SoftwareSwitch.start(new SwitchOptions(bindHost,
                    Collections.nCopies(lanes, 0), false, FaultPlan.NONE));
            LOG.info("spark-switchml: embedded software switch listening on {}", sw.address());
            try {
                return new EmbeddedSwitchRegistrar(sw, true);
            } catch (final RuntimeException e) {
                sw.close();
                throw e;
            }
        }, "the embedded software switch on " + host, null, all, driverHost);
    }

    /** The executor runtime of a local master without the plugin (this JVM is the only executor). */
    synchronized ExecutorRuntime localExecutor() {
        if (closed) {
            throw new IllegalStateException("spark-switchml driver runtime is closed");
        }
        if (localExecutor == null) {
            localExecutor = ExecutorRuntime.forLocal(this, conf, driverHost);
        }
        return localExecutor;
    }

    /** Tries the registrar once; remembers why it failed. */
    private synchronized void connect() {
        lastAttemptNs = System.nanoTime();
        try {
            registrar = factory.get();
            unreachable = null;
        } catch (final RuntimeException e) {
            registrar = null;
            unreachable = e.getMessage() == null ? e.toString() : e.getMessage();
        }
    }

    /**
     * The registrar, reconnecting (at most every two seconds) when the switch was unreachable; null with
     * {@link #unreachableReason()} set when it still is.
     */
    JobRegistrar availableRegistrar() {
        JobRegistrar r = registrar;
        if (r != null || closed) {
            return r;
        }
        synchronized (this) {
            if (registrar == null && System.nanoTime() - lastAttemptNs > TimeUnit.MILLISECONDS.toNanos(RETRY_UNREACHABLE_MS)) {
                connect();
                if (registrar != null) {
                    LOG.info("spark-switchml: {} answers again", what);
                }
            }
            return registrar;
        }
    }

    /** Why the switch is unreachable (what was tried and what happened), or null when it is up. */
    String unreachableReason() {
        return registrar == null ? what + ": " + unreachable : null;
    }

    /** Marks the registrar as unreachable after a failure, so the next call reconnects. */
    synchronized void lostRegistrar(final JobRegistrar r, final String reason) {
        if (registrar == r && r != null) {
            registrar = null;
            unreachable = reason;
            lastAttemptNs = System.nanoTime();
            try {
                r.close();
            } catch (final RuntimeException e) {
                LOG.debug("spark-switchml: closing the lost registrar: {}", e.toString());
            }
        }
    }

    static void installPluginRuntime(final DriverRuntime rt) {
        synchronized (LOCK) {
            pluginRuntime = rt;
        }
    }

    static void clearPluginRuntime(final DriverRuntime rt) {
        synchronized (LOCK) {
            if (pluginRuntime == rt) {
                pluginRuntime = null;
            }
        }
    }

    /** The runtime of this JVM's driver plugin, or the automatic local one, or null. */
    static DriverRuntime inThisJvm() {
        synchronized (LOCK) {
            return pluginRuntime != null ? pluginRuntime : autoRuntime;
        }
    }

    /**
     * The runtime for {@code sc}. Without the plugin, a local master gets an embedded switch started
     * here (no set-up needed); a cluster master is an error naming {@code spark.plugins}.
     */
    public static DriverRuntime forContext(final SparkContext sc) {
        synchronized (LOCK) {
            if (pluginRuntime != null && !pluginRuntime.closed) {
                return pluginRuntime;
            }
            requirePluginUnlessLocal(sc.isLocal(), sc.master());
            if (autoRuntime == null || autoRuntime.closed) {
                final SparkConf conf = sc.conf();
                final Map<String, String> all = new HashMap<>();
                for (final scala.Tuple2<String, String> kv : conf.getAll()) {
                    all.put(kv._1(), kv._2());
                }
                SwitchMLConfig.validate(SwitchMLConfig.of(all), all.keySet());
                final DriverRuntime rt = create(SwitchMLConfig.of(conf), conf.get("spark.driver.host", "127.0.0.1"), all);
                autoRuntime = rt;
                // Stop the switch with the application.
                sc.addSparkListener(new SparkListener() {
                    @Override
                    public void onApplicationEnd(final SparkListenerApplicationEnd end) {
                        synchronized (LOCK) {
                            if (autoRuntime == rt) {
                                autoRuntime = null;
                            }
                        }
                        rt.close();
                    }
                });
                LOG.info("spark-switchml: no driver plugin configured; started the driver runtime for local master {}",
                        sc.master());
            }
            return autoRuntime;
        }
    }

    /** A cluster master needs the plugin: its executors learn the switch from the driver plugin. */
    static void requirePluginUnlessLocal(final boolean local, final String master) {
        if (!local) {
            throw new IllegalStateException("spark-switchml: master " + master + " runs executors in "
                    + "other JVMs, which learn the switch from the driver plugin: set spark.plugins="
                    + SwitchMLPlugin.class.getName() + " (and put the spark-switchml jar on the executor "
                    + "classpath, e.g. with --jars)");
        }
    }

    /** The registrar, or null while the switch is unreachable. */
    public JobRegistrar registrar() {
        return availableRegistrar();
    }

    /** The switch's dataplane address (the configured one while an external switch is unreachable). */
    public SwitchAddress switchAddress() {
        final JobRegistrar r = registrar;
        return r != null ? r.address() : configuredAddress;
    }

    /** Human-readable name of the switch, for messages. */
    String switchName() {
        final SwitchAddress a = switchAddress();
        return a != null ? a.toString() : what;
    }

    int newJobId() {
        return nextJobId.incrementAndGet() & 0x7FFF_FFFF;
    }

    /**
     * Installs a job synchronously (tests and direct users); returns the spec as installed.
     *
     * @throws IllegalStateException when the switch is unreachable or the runtime closed
     */
    JobSpec register(final JobSpec spec) {
        if (closed) {
            throw new IllegalStateException("spark-switchml driver runtime is closed");
        }
        final JobRegistrar r = availableRegistrar();
        if (r == null) {
            throw new IllegalStateException(unreachableReason());
        }
        final JobSpec installed;
        try {
            installed = r.register(spec);
        } catch (final RuntimeException e) {
            if (!r.reachable()) {
                lostRegistrar(r, e.getMessage());
            }
            throw e;
        }
        generations.computeIfAbsent(spec.jobId(), id -> Collections.synchronizedList(new ArrayList<>()))
                .add(spec.generation());
        return installed;
    }

    /** Removes a finished job, keeping its final counters when the switch is embedded. */
    void remove(final int jobId) {
        final JobRegistrar r = registrar;
        if (r == null || closed) {
            return;
        }
        // Off the caller's path: the call returns while the switch forgets the job. Counter reads wait.
        final java.util.concurrent.FutureTask<Void> f = new java.util.concurrent.FutureTask<>(() -> removeNow(r, jobId), null);
        removals.put(jobId, f);
        try {
            registrations.execute(f);
        } catch (final java.util.concurrent.RejectedExecutionException e) {
            removals.remove(jobId); // closing
        }
    }

    private void removeNow(final JobRegistrar r, final int jobId) {
        try {
            if (r instanceof EmbeddedSwitchRegistrar) {
                final JobCounters c = ((EmbeddedSwitchRegistrar) r).counters(jobId);
                if (c != null) {
                    finalCounters.put(jobId, c);
                }
            }
            r.remove(jobId);
        } catch (final RuntimeException e) {
            LOG.debug("spark-switchml: cannot remove job {}: {}", Integer.toUnsignedString(jobId), e.toString());
        } finally {
            removals.remove(jobId);
        }
    }

    void countFallback() {
        fallbacks.incrementAndGet();
    }

    /** How many calls fell back to treeAggregate because the switch was unreachable. */
    public long fallbackCount() {
        return fallbacks.get();
    }

    /** The generations registered for a job id, in order (one per barrier stage attempt). */
    public List<Integer> generationsOf(final int jobId) {
        final List<Integer> g = generations.get(jobId);
        if (g == null) {
            return List.of();
        }
        synchronized (g) {
            return List.copyOf(g);
        }
    }

    /** Switch counters of a finished job (embedded switch only), or null. */
    public JobCounters finalCounters(final int jobId) {
        awaitRemoval(jobId);
        return finalCounters.get(jobId);
    }

    /** Waits (at most 10 s) until a removal of {@code jobId} that is under way has finished. */
    void awaitRemoval(final int jobId) {
        final java.util.concurrent.Future<?> pending = removals.get(jobId);
        if (pending != null) {
            try {
                pending.get(10, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                LOG.debug("spark-switchml: removal of job {} did not finish: {}", Integer.toUnsignedString(jobId), e.toString());
            }
        }
    }

    // --------------------------------------------------------------------------------------- rendezvous

    /**
     * Announces a barrier stage before it is submitted: its tasks will say hello, and the plan is made
     * when all {@code tasks} have.
     *
     * @param preferred  per source partition, the executor id holding it (cached), or null
     * @param partitions the source partitions, handed to each task as the plan assigns them
     */
    void beginStage(final TaskSettings s, final String[] preferred, final org.apache.spark.Partition[] partitions,
                    final int slots) {
        final StagePlanner p = new StagePlanner(s, preferred, partitions);
        stages.put(s.stageKey(), p);
        // The stage takes every task slot: every executor will run a task of it, so its job can be installed
        // now, while Spark schedules the tasks, instead of after they gather.
        if (s.tasks() == slots && !workers.isEmpty()) {
            p.installAhead(new ArrayList<>(new java.util.TreeMap<>(workers).values()));
        }
    }

    /** An executor announced its worker socket. */
    void addWorker(final Rendezvous.Worker w) {
        workers.put(w.executorId(), w);
    }

    /** An executor is gone. */
    void removeWorker(final String executorId) {
        workers.remove(executorId);
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
        synchronized (p) {
            return new long[] {p.lastHelloNs - p.firstHelloNs, p.installNs};
        }
    }

    /** Handles a message from a task (plugin RPC or a direct call); never blocks. */
    Object receive(final Object message) {
        if (message instanceof Rendezvous.Hello h) {
            final StagePlanner p = stages.get(h.stage());
            if (p == null) {
                return Rendezvous.PlanReply.failed("stage " + h.stage() + " is not running (a stale attempt?)", false);
            }
            return p.hello(h);
        }
        if (message instanceof Rendezvous.Worker w) {
            addWorker(w);
            return null; // one way
        }
        if (message instanceof Rendezvous.Streaming st) {
            final StagePlanner p = stages.get(st.stage());
            if (p != null) {
                p.streaming(st.rank());
            }
            return null; // one way
        }
        if (message instanceof Rendezvous.Progress pr) {
            final ReplicatedLoop.Progress l = progressListeners.get(pr.listener());
            if (l != null) {
                progressThread.execute(() -> {
                    try {
                        l.onIteration(pr.iteration(), pr.scalars(), pr.nanos(), pr.jobId());
                    } catch (final RuntimeException e) {
                        LOG.warn("spark-switchml: a progress listener failed: {}", e.toString());
                    }
                });
            }
            return null; // one way
        }
        if (message instanceof Rendezvous.AllStreaming q) {
            final StagePlanner p = stages.get(q.stage());
            return p != null && p.allStreaming();
        }
        throw new IllegalArgumentException("spark-switchml driver: unexpected message " + message);
    }

    /**
     * Collects the hellos of one stage attempt, makes the plan when the last one arrives, and gives it
     * out once the stage's job is installed on the switch, so the tasks stream at once and no packet
     * reaches the switch before its job. The job is installed ahead, while the tasks start, when the
     * stage will run on every executor; otherwise (or when the tasks landed elsewhere) after the hellos.
     */
    private final class StagePlanner {
        private final TaskSettings settings;
        private final String[] preferred;
        private final org.apache.spark.Partition[] partitions;
        private final Rendezvous.Hello[] hellos;
        private int count;
        private volatile Rendezvous.PlanReply reply = Rendezvous.PlanReply.PENDING;
        /** The job installed ahead (its executors in rank order, and its installation), or null. */
        private List<String> aheadOrder;
        private java.util.concurrent.CompletableFuture<JobSpec> ahead;
        /** For the stage's profile: first and last hello, and the job's installation (ns). */
        private long firstHelloNs;
        private long lastHelloNs;
        private volatile long installNs;
        private final java.util.Set<Integer> streaming = java.util.concurrent.ConcurrentHashMap.newKeySet();

        void streaming(final int rank) {
            streaming.add(rank);
        }

        boolean allStreaming() {
            final Rendezvous.Plan p = reply.plan();
            return p != null && streaming.size() >= p.workers();
        }

        StagePlanner(final TaskSettings settings, final String[] preferred, final org.apache.spark.Partition[] partitions) {
            this.settings = settings;
            this.preferred = preferred;
            this.partitions = partitions;
            this.hellos = new Rendezvous.Hello[settings.tasks()];
        }

        /** Installs the job for {@code known} executors (rank = position) in the background. */
        synchronized void installAhead(final List<Rendezvous.Worker> known) {
            final JobRegistrar r = registrar;
            if (r == null || known.size() > org.switchml.protocol.Wire.MAX_WORKERS) {
                return;
            }
            final Rendezvous.Hello[] asHellos = new Rendezvous.Hello[known.size()];
            for (int i = 0; i < asHellos.length; i++) {
                final Rendezvous.Worker w = known.get(i);
                asHellos[i] = new Rendezvous.Hello(settings.stageKey(), i, w.executorId(), w.endpoint(), w.mtu());
            }
            final Rendezvous.Plan shape;
            try {
                shape = StagePlans.make(r.address().toString(), settings, asHellos, new String[0], r.requiredK(), switchMtu());
            } catch (final RuntimeException e) {
                return; // planned again, with its error, when the tasks say hello
            }
            aheadOrder = known.stream().map(Rendezvous.Worker::executorId).toList();
            ahead = install(specOf(shape));
        }

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
            final org.apache.spark.Partition[] parts = new org.apache.spark.Partition[mine.length];
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
            final JobRegistrar r = registrar;
            if (r == null) {
                reply = Rendezvous.PlanReply.failed(unreachableReason(), true);
                return;
            }
            final Rendezvous.Plan plan;
            try {
                plan = StagePlans.make(r.address().toString(), settings, hellos, preferred, r.requiredK(), switchMtu(),
                        aheadOrder);
            } catch (final RuntimeException e) {
                reply = Rendezvous.PlanReply.failed(e.getMessage(), false);
                return;
            }
            final JobSpec spec = specOf(plan);
            final java.util.concurrent.CompletableFuture<JobSpec> installed;
            if (ahead != null) {
                // The same job if the tasks ran where expected (same endpoints in the same order, same k
                // and pool); else the job installed ahead is taken back first (same id and generation).
                installed = ahead.handle((done, failure) -> done).thenCompose(done -> {
                    if (done != null && sameShape(done, spec)) {
                        return java.util.concurrent.CompletableFuture.completedFuture(done);
                    }
                    LOG.info("spark-switchml: job {} was installed ahead as {} but the stage runs as {}; installing it again",
                            spec.jobName(), done, spec);
                    return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        if (done != null) {
                            removeNow(r, spec.jobId());
                        }
                        return null;
                    }, registrations).thenCompose(x -> install(spec));
                });
            } else {
                installed = install(spec);
            }
            installed.whenComplete((done, failure) -> {
                if (failure != null) {
                    final Throwable c = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                            ? failure.getCause() : failure;
                    reply = Rendezvous.PlanReply.failed("registration of job " + spec.jobName() + " on switch "
                            + switchName() + " failed: " + c.getMessage(), true);
                    return;
                }
                reply = new Rendezvous.PlanReply(new Rendezvous.Plan(plan.switchAddress(), plan.jobId(),
                        plan.generation(), secretOf(done), plan.k(), plan.poolSize(), plan.endpoints(), plan.rankOfTask(),
                        plan.localIndex(), plan.localCount(), plan.partitions()), null, false, null);
            });
        }

        /** Installs {@code spec} on the registration thread; completes with the spec as installed. */
        private java.util.concurrent.CompletableFuture<JobSpec> install(final JobSpec spec) {
            return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                final long t0 = System.nanoTime();
                final JobSpec done = register(spec);
                installNs = System.nanoTime() - t0;
                return done;
            }, registrations);
        }
    }

    private static JobSpec specOf(final Rendezvous.Plan plan) {
        final List<InetSocketAddress> w = new ArrayList<>();
        for (final String e : plan.endpoints()) {
            w.add(RegisterJob.parseEndpoint(e));
        }
        return new JobSpec(plan.jobId(), plan.generation(), plan.k(), plan.poolSize(), w);
    }

    private static boolean sameShape(final JobSpec a, final JobSpec b) {
        return a.jobId() == b.jobId() && a.generation() == b.generation() && a.k() == b.k()
                && a.poolSize() == b.poolSize() && a.workers().equals(b.workers());
    }

    /** The secret the switch checks in every packet of {@code spec}'s registration. */
    static int secretOf(final JobSpec spec) {
        return spec.secret();
    }

    /** MTU of the embedded switch's interface (0 when unknown or external). */
    private int switchMtu() {
        final JobRegistrar r = registrar;
        if (!(r instanceof EmbeddedSwitchRegistrar)) {
            return 0;
        }
        return mtuOf(r.address().host());
    }

    /** MTU of the interface that has {@code host}'s address (0 when unknown). */
    static int mtuOf(final String host) {
        try {
            final NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(host));
            return nif == null ? 0 : Math.max(0, nif.getMTU());
        } catch (final java.io.IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Largest k whose datagram fits {@code mtu} unfragmented (IPv4 20 + UDP 8 + header + 4k). */
    static int kForMtu(final int mtu) {
        return (mtu - 28 - Wire.HEADER_LENGTH) / 4;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (localExecutor != null) {
                localExecutor.close();
                localExecutor = null;
            }
        }
        registrations.shutdownNow();
        progressThread.shutdownNow();
        final JobRegistrar r = registrar;
        if (r != null) {
            r.close();
        }
    }
}

package org.switchml.spark.driver;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.spark.Partition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.executor.ExecutorRuntime;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;
import org.switchml.spark.registrar.JobRegistrar;

/**
 * The driver side of spark-switchml in one JVM, for the life of one SparkContext: the link to the switch,
 * the book of its jobs, the rendezvous of barrier stages, the progress reports of running loops, and the
 * count of fallbacks. Created by the driver plugin, or automatically for a local master without it
 * ({@link DriverRuntimes}).
 *
 * <p>A switch that cannot be reached when the runtime starts does not stop the application: the runtime
 * logs one warning naming what was tried, and every aggregation first tries to reach it again; until it
 * answers, {@code spark.switchml.fallback} applies.
 */
public final class DriverRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DriverRuntime.class);

    private final RegistrarLink link;
    private final JobBook jobs;
    private final StageRendezvous rendezvous;
    private final ShardHosts shardHosts;
    private final ProgressDispatch progress = new ProgressDispatch();
    private final AtomicLong fallbacks = new AtomicLong();
    /** Settings and host for the executor runtime of a local master without the plugin. */
    private final Map<String, String> conf;

    private final String driverHost;
    private ExecutorRuntime localExecutor;
    private volatile boolean closed;

    private DriverRuntime(final RegistrarLink link, final Map<String, String> conf, final String driverHost) {
        this.link = link;
        this.conf = Map.copyOf(conf);
        this.driverHost = driverHost;
        this.jobs = new JobBook(link);
        this.shardHosts = ShardHosts.from(SwitchMLConfig.of(this.conf), link, this.conf);
        this.rendezvous = new StageRendezvous(link, jobs, shardHosts);
        if (link.current() == null) {
            LOG.warn(
                    "spark-switchml: {}; aggregations fall back per {} until it answers",
                    link.unreachableReason(),
                    SwitchMLConfig.FALLBACK.key());
        }
    }

    /**
     * Builds the runtime the settings ask for: an external switch (through P4Runtime or a registrar class),
     * or an embedded software switch. A bad setting throws; a switch that cannot be reached does not.
     *
     * @param driverHost the driver's host (null or empty: loopback)
     * @param all        every Spark setting
     */
    public static DriverRuntime create(
            final Function<String, String> settings, final String driverHost, final Map<String, String> all) {
        final String host = driverHost == null || driverHost.isEmpty() ? "127.0.0.1" : driverHost;
        return new DriverRuntime(Registrars.link(settings, host, all), all, host);
    }

    /** A runtime around a registrar that is already up (tests, embedded uses). */
    public static DriverRuntime around(final JobRegistrar registrar) {
        return new DriverRuntime(
                new RegistrarLink(() -> registrar, "switch " + registrar.address(), registrar.address()),
                Map.of(),
                "127.0.0.1");
    }

    /** The executor runtime of a local master without the plugin (this JVM is the only executor). */
    synchronized ExecutorRuntime localExecutor() {
        if (closed) {
            throw new IllegalStateException("spark-switchml driver runtime is closed");
        }
        if (localExecutor == null) {
            localExecutor = ExecutorRuntime.forLocal(conf, driverHost, this::receive);
        }
        return localExecutor;
    }

    /** The registrar, reconnecting when the switch was unreachable; null while it still is. */
    public JobRegistrar registrar() {
        return link.available();
    }

    /** Why the switch is unreachable (what was tried and what happened), or null when it is up. */
    public String unreachableReason() {
        return link.unreachableReason();
    }

    /** The switch's dataplane address (the configured one while an external switch is unreachable). */
    public SwitchAddress switchAddress() {
        return link.switchAddress();
    }

    /** Human-readable name of the switch, for messages. */
    public String switchName() {
        return link.switchName();
    }

    /** A new job id for a switch call. */
    public int newJobId() {
        return jobs.newJobId();
    }

    /**
     * Installs a job synchronously (tests and direct users); returns the spec as installed.
     *
     * @throws IllegalStateException when the switch is unreachable or the runtime closed
     */
    public JobSpec register(final JobSpec spec) {
        return jobs.register(spec);
    }

    /** Removes a finished job in the background, keeping its final counters when the switch reports them. */
    public void remove(final int jobId) {
        jobs.remove(jobId);
    }

    /** Waits (at most 10 s) until a removal of {@code jobId} that is under way has finished. */
    public void awaitRemoval(final int jobId) {
        jobs.awaitRemoval(jobId);
    }

    /** The generations registered for a job id, in order (one per barrier stage attempt). */
    public List<Integer> generationsOf(final int jobId) {
        return jobs.generationsOf(jobId);
    }

    /** Switch counters of a finished job, when its switch reports them, or null. */
    public JobCounters finalCounters(final int jobId) {
        return jobs.finalCounters(jobId);
    }

    /** The switch's counters summed over this application's removed jobs (zero when the switch does not count jobs). */
    public JobCounters removedJobTotals() {
        return jobs.removedTotals();
    }

    /**
     * The switch's counters summed over this application's jobs: the removed ones and, read now, the running ones
     * (zero when the switch does not count jobs). For the metrics source, which keeps them monotonic.
     */
    public JobCounters jobTotals() {
        return jobs.totals();
    }

    /** Counts a call that fell back to treeAggregate because the switch was unreachable. */
    public void countFallback() {
        fallbacks.incrementAndGet();
    }

    /**
     * How many calls fell back to treeAggregate: the switch was unreachable, or Spark refused barrier stages
     * (dynamic allocation).
     */
    public long fallbackCount() {
        return fallbacks.get();
    }

    /** Registers a loop's progress listener; returns its id (never 0). */
    public long addProgress(final Consumer<Rendezvous.Progress> listener) {
        return progress.add(listener);
    }

    /** Forgets a loop's progress listener, after the reports already queued for it. */
    public void removeProgress(final long id) {
        progress.remove(id);
    }

    /** See {@link StageRendezvous#beginStage}. */
    void beginStage(
            final TaskSettings s,
            final String[] preferred,
            final Partition[] partitions,
            final int slots,
            final boolean localShortcut) {
        rendezvous.beginStage(s, preferred, partitions, slots, localShortcut);
    }

    /** See {@link StageRendezvous#endStage}. */
    long[] endStage(final TaskSettings s) {
        return rendezvous.endStage(s);
    }

    /**
     * The registrar for a new stage (reconnecting when needed, and trying the extra shard hosts that did not
     * answer), or null while the switch is unreachable.
     */
    JobRegistrar availableRegistrar() {
        shardHosts.refresh();
        return link.available();
    }

    /**
     * The executors of stage attempt {@code stageKey} that Spark lost, with their switch shards, for a failure's
     * message; empty when none (or the stage is over).
     */
    public String lostShards(final String stageKey) {
        return rendezvous.lostShards(stageKey);
    }

    /** The executors of stage attempt {@code stageKey} not among {@code live}, with their shards; empty when none. */
    String goneShards(final String stageKey, final java.util.Set<String> live) {
        return rendezvous.goneShards(stageKey, live);
    }

    /** The dataplane address of the switch shard executor {@code executorId} announced, or null. */
    public String shardOf(final String executorId) {
        return rendezvous.shardOf(executorId);
    }

    /** Whether stages of two or more executors run on switch shards hosted by the executors. */
    public boolean shardsOnExecutors() {
        return shardHosts.onExecutors();
    }

    /** An executor is gone. */
    public void removeWorker(final String executorId) {
        rendezvous.removeWorker(executorId);
    }

    /** Handles a message from a task or an executor (plugin RPC or a direct call); never blocks. */
    public Object receive(final Object message) {
        if (message instanceof Rendezvous.Hello h) {
            return rendezvous.hello(h);
        }
        if (message instanceof Rendezvous.Worker w) {
            rendezvous.addWorker(w);
            return null; // one way
        }
        if (message instanceof Rendezvous.Streaming st) {
            rendezvous.streaming(st);
            return null; // one way
        }
        if (message instanceof Rendezvous.Progress pr) {
            progress.deliver(pr);
            return null; // one way
        }
        if (message instanceof Rendezvous.AllStreaming q) {
            return rendezvous.allStreaming(q);
        }
        if (message instanceof Rendezvous.ShardInstalled m) {
            rendezvous.shardInstalled(m);
            return Boolean.TRUE;
        }
        if (message instanceof Rendezvous.ShardCounters c) {
            jobs.addCounters(c.jobId(), c.generation(), Rendezvous.countersOf(c.counters()));
            return null; // one way
        }
        if (message instanceof Rendezvous.LostShards q) {
            return rendezvous.lostShards(q.stage());
        }
        throw new IllegalArgumentException("spark-switchml driver: unexpected message " + message);
    }

    /** Whether {@link #close()} was called. */
    boolean closed() {
        return closed;
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
        jobs.close();
        progress.close();
        shardHosts.close();
        link.close();
    }
}

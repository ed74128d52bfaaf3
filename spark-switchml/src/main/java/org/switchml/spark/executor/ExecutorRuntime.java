package org.switchml.spark.executor;

import java.io.IOException;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.client.ClientOptions;
import org.switchml.client.ClientStats;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.config.WorkerHosts;
import org.switchml.spark.messages.Endpoints;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;
import org.switchml.spark.shard.ExecutorShard;

/**
 * One executor's side of spark-switchml, for the life of the application: its worker socket (the
 * switch's worker for every task of this executor: SwitchML's one worker per host), the way to the
 * driver, and the state of the barrier stages running here.
 *
 * <p>With the plugin it is created by the executor plugin at executor start. With a local master and no
 * plugin, the driver JVM is the only executor: it is created on first use next to the driver runtime.
 */
public final class ExecutorRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExecutorRuntime.class);
    private static volatile ExecutorRuntime installed;
    /** Where a task finds its runtime when no executor plugin installed one (a local master without the plugin). */
    private static volatile Supplier<ExecutorRuntime> localFallback = () -> null;

    private final String executorId;
    private final SwitchMLClient worker;
    private final int mtu;
    private final Function<Object, Object> driver;
    /** One-way messages to the driver. */
    private final Consumer<Object> tell;

    private final Map<String, ExecutorStage> stages = new ConcurrentHashMap<>();
    private final AtomicLong allreduces = new AtomicLong();
    private final AtomicLong allreduceBytes = new AtomicLong();
    private volatile LongConsumer allreduceTimes = ns -> {};

    /** Why this executor has no worker socket (null when it has one). */
    private final String broken;
    /** The switch shard this executor hosts for sharded stages, or null. */
    private final ExecutorShard shard;

    private ExecutorRuntime(
            final String executorId,
            final SwitchMLClient worker,
            final String broken,
            final Function<Object, Object> driver,
            final Consumer<Object> tell,
            final ExecutorShard shard) {
        this.tell = tell;
        this.executorId = executorId;
        this.worker = worker;
        this.broken = broken;
        this.shard = shard;
        this.mtu = worker == null
                ? 0
                : Endpoints.mtuOf(worker.localAddress().getAddress().getHostAddress());
        this.driver = driver;
    }

    /**
     * The executor plugin's runtime: binds the worker socket on {@code spark.switchml.worker.host} or this
     * executor's host ({@link WorkerHosts#automatic}). Never throws (an exception here would stop the executor, and Spark would start
     * new ones forever): without a socket, this executor's tasks report the switch unreachable and the
     * driver falls back.
     */
    public static ExecutorRuntime forPlugin(final PluginContext ctx, final Map<String, String> conf) {
        final String id = ctx.executorID();
        final Function<Object, Object> driver = msg -> {
            try {
                final Object reply = ctx.ask(Rendezvous.encode((Serializable) msg));
                return reply instanceof byte[] b ? Rendezvous.decode(b) : reply;
            } catch (final Exception e) {
                throw new SwitchMLException(
                        "executor " + id + ": the driver did not answer "
                                + msg.getClass().getSimpleName() + ": " + e,
                        e);
            }
        };
        final Consumer<Object> tell = msg -> {
            try {
                ctx.send(Rendezvous.encode((Serializable) msg));
            } catch (final IOException | RuntimeException e) {
                LOG.debug("spark-switchml: executor {} could not tell the driver {}: {}", id, msg, e.toString());
            }
        };
        String host = "";
        try {
            host = WorkerHosts.resolve(SwitchMLConfig.WORKER_HOST.from(conf::get));
            if (host.isEmpty()) {
                host = WorkerHosts.automatic(executorHost(), WorkerHosts.switchHost(conf));
            }
            final SwitchMLClient worker = SwitchMLClient.open(clientOptions(conf, host));
            final ExecutorShard shard =
                    shardFor(id, conf, worker.localAddress().getAddress().getHostAddress());
            LOG.info(
                    "spark-switchml: executor {} worker socket {}{}",
                    id,
                    worker.localAddress(),
                    shard == null ? "" : ", switch shard " + shard.address());
            final ExecutorRuntime rt = new ExecutorRuntime(id, worker, null, driver, tell, shard);
            // Tell the driver now, so it can install a stage's job before the stage's tasks start.
            tell.accept(rt.announcement());
            return rt;
        } catch (final RuntimeException e) {
            final String why = "executor " + id + " cannot open its worker socket on " + host + ": " + e.getMessage();
            LOG.error("spark-switchml: {}; its tasks will report the switch unreachable", why, e);
            return new ExecutorRuntime(id, null, why, driver, tell, null);
        }
    }

    /**
     * The switch shard of an executor whose settings let executors host shards (a cluster, no external switch,
     * placement not {@code driver}), on the worker socket's address; null otherwise (a local master has one
     * executor), or when it cannot bind (logged: the driver then runs the stages on its own switch).
     */
    private static ExecutorShard shardFor(final String id, final Map<String, String> conf, final String host) {
        final String master = conf.getOrDefault("spark.master", "");
        if (master.equals("local")
                || master.startsWith("local[")
                || !SwitchMLConfig.SWITCH_ADDRESS.from(conf::get).isEmpty()
                || !SwitchMLConfig.JOB_SERVICE_ADDRESS.from(conf::get).isEmpty()
                || !SwitchMLConfig.REGISTRAR.from(conf::get).isEmpty()
                || SwitchMLConfig.PLACEMENT.from(conf::get) == SwitchMLConfig.Placement.DRIVER) {
            return null;
        }
        try {
            return ExecutorShard.start(host, SwitchMLConfig.SHARD_LANES.from(conf::get));
        } catch (final RuntimeException e) {
            LOG.error(
                    "spark-switchml: executor {} cannot start its switch shard on {}: {}; stages it runs in use the "
                            + "driver's switch",
                    id,
                    host,
                    e.getMessage());
            return null;
        }
    }

    /** The host Spark knows this executor by (its block manager's), else the local host's address. */
    private static String executorHost() {
        final SparkEnv env = SparkEnv.get();
        if (env != null && env.blockManager() != null && env.blockManager().blockManagerId() != null) {
            return env.blockManager().blockManagerId().host();
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (final UnknownHostException e) {
            return "127.0.0.1";
        }
    }

    /** What the driver needs to know of this executor's worker socket. */
    Rendezvous.Worker announcement() {
        return new Rendezvous.Worker(executorId, Endpoints.endpoint(worker.localAddress()), mtu, shardAddress());
    }

    /** The dataplane address of the shard this executor hosts, or null. */
    String shardAddress() {
        return shard == null ? null : shard.address().toString();
    }

    /** The shard this executor hosts, or null. */
    ExecutorShard shard() {
        return shard;
    }

    /** Why this executor cannot take part in switch jobs, or null. */
    String broken() {
        return broken;
    }

    /**
     * The runtime of a local master without the plugin: the driver JVM is the executor, and {@code driver}
     * answers its messages directly.
     */
    public static ExecutorRuntime forLocal(
            final Map<String, String> conf, final String driverHost, final Function<Object, Object> driver) {
        final String host = WorkerHosts.resolve(SwitchMLConfig.WORKER_HOST.from(conf::get));
        final SwitchMLClient worker = SwitchMLClient.open(clientOptions(
                conf, host.isEmpty() ? WorkerHosts.automatic(driverHost, WorkerHosts.switchHost(conf)) : host));
        final ExecutorRuntime e = new ExecutorRuntime("driver", worker, null, driver, driver::apply, null);
        e.tell(e.announcement());
        return e;
    }

    /** Where a task finds its runtime when no executor plugin installed one; the supplier may answer null. */
    public static void setLocalFallback(final Supplier<ExecutorRuntime> fallback) {
        localFallback = fallback;
    }

    private static ClientOptions clientOptions(final Map<String, String> conf, final String host) {
        final long first = SwitchMLConfig.RETRANSMIT_TIMEOUT.from(conf::get);
        return ClientOptions.defaults()
                .withBindHost(host)
                .withRetransmitTimeoutMs(first, Math.max(first, ClientOptions.DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS));
    }

    public static void install(final ExecutorRuntime rt) {
        installed = rt;
    }

    public static void uninstall(final ExecutorRuntime rt) {
        if (installed == rt) {
            installed = null;
        }
    }

    /** The runtime of this executor; errors name spark.plugins when there is none. */
    static ExecutorRuntime get() {
        final ExecutorRuntime rt = installed;
        if (rt != null) {
            return rt;
        }
        final ExecutorRuntime local = localFallback.get();
        if (local != null) {
            return local;
        }
        throw new IllegalStateException(
                "spark-switchml: this executor has no spark-switchml runtime; set spark.plugins="
                        + SwitchMLConfig.PLUGIN_CLASS
                        + " and put the spark-switchml jar on the executor classpath (--jars)");
    }

    String executorId() {
        return executorId;
    }

    SwitchMLClient worker() {
        return worker;
    }

    int mtu() {
        return mtu;
    }

    /** Allreduces this executor has finished, through the switch or summed in memory. */
    public long allreduces() {
        return allreduces.get();
    }

    /** Bytes of the vectors this executor allreduced (8 per element in fp64, 4 in fp32). */
    public long allreduceBytes() {
        return allreduceBytes.get();
    }

    /** The worker socket's counters (packets sent, retransmissions, ...), or null when it could not open. */
    public ClientStats workerStats() {
        return worker == null ? null : worker.stats();
    }

    /** Hands every finished allreduce's duration (ns) to {@code times}, e.g. a metrics histogram. */
    public void onAllReduceTime(final LongConsumer times) {
        allreduceTimes = times;
    }

    /** Counts one finished allreduce of {@code bytes} that took {@code nanos}. */
    void countAllReduce(final long bytes, final long nanos) {
        allreduces.incrementAndGet();
        allreduceBytes.addAndGet(bytes);
        allreduceTimes.accept(nanos);
    }

    /** Sends {@code message} to the driver, one way. */
    void tell(final Object message) {
        tell.accept(message);
    }

    /** Sends {@code message} to the driver and returns its (immediate) answer. */
    Object ask(final Object message) {
        return driver.apply(message);
    }

    /** This executor's state of stage attempt {@code key}, created by the first of its tasks to arrive. */
    ExecutorStage joinStage(final String key, final Rendezvous.Plan plan, final int rank, final TaskSettings settings) {
        return stages.compute(key, (k, old) -> {
            final ExecutorStage s = old != null ? old : new ExecutorStage(this, key, plan, rank, settings);
            s.enter();
            return s;
        });
    }

    /** A task of stage {@code s} is done with it; the last one to leave removes it, and ends its shard's part. */
    void leaveStage(final ExecutorStage s) {
        final boolean[] last = new boolean[1];
        stages.computeIfPresent(s.key(), (k, cur) -> {
            if (cur == s && s.leave()) {
                last[0] = true;
                return null;
            }
            return cur;
        });
        if (last[0]) {
            s.ended();
        }
    }

    /**
     * Installs this executor's part of sharded plan {@code plan} (rank {@code rank}) on its shard; the same part
     * again changes nothing.
     *
     * @throws SwitchMLException when this executor hosts no shard
     */
    void installShardPart(final Rendezvous.Plan plan, final int rank) {
        if (shard == null) {
            throw new SwitchMLException("executor " + executorId + " hosts no switch shard, but the plan of job "
                    + Integer.toUnsignedString(plan.jobId()) + " places a part on it");
        }
        for (final Rendezvous.Shard s : plan.shards()) {
            if (s.hostRank() == rank) {
                shard.install(ExecutorStage.partSpec(plan, s));
            }
        }
    }

    @Override
    public void close() {
        for (final ExecutorStage s : stages.values()) {
            s.fail(new SwitchMLException("executor " + executorId + ": spark-switchml is shutting down"));
        }
        if (worker != null) {
            worker.close();
        }
        if (shard != null) {
            shard.close();
        }
    }
}

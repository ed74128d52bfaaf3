package org.switchml.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.dataplane.JobCounters;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.transport.FaultPlan;

import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The driver side of spark-switchml in one JVM: the job registrar (embedded or external switch), job
 * ids, and counters. Created by {@link SwitchMLPlugin}'s driver plugin, or automatically for a local
 * master without the plugin.
 */
public final class DriverRuntime implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DriverRuntime.class);
    private static final Object LOCK = new Object();
    /** Set by the driver plugin for the life of its SparkContext. */
    private static DriverRuntime pluginRuntime;
    /** Started on demand for a local master without the plugin. */
    private static DriverRuntime autoRuntime;

    private final JobRegistrar registrar;
    private final AtomicInteger nextJobId;
    private final AtomicLong fallbacks = new AtomicLong();
    private final Map<Integer, List<Integer>> generations = new ConcurrentHashMap<>();
    private final Map<Integer, JobCounters> finalCounters = new ConcurrentHashMap<>();
    /** Per job id, the latest registration (every task of a stage asks for it; one registers). */
    private final Map<Integer, JobSpec> registered = new HashMap<>();
    private volatile boolean closed;

    DriverRuntime(final JobRegistrar registrar) {
        this.registrar = registrar;
        // Random base: two applications sharing an external switch should not pick the same ids.
        this.nextJobId = new AtomicInteger(new SplittableRandom().nextInt(1 << 30));
    }

    /** Builds the registrar the settings ask for: an external switch, or an embedded software switch. */
    static DriverRuntime create(final Function<String, String> settings, final String driverHost,
                                final Map<String, String> all) {
        final String external = SwitchMLConfig.SWITCH_ADDRESS.from(settings);
        final String registrarClass = SwitchMLConfig.REGISTRAR.from(settings);
        if (!external.isEmpty()) {
            if (registrarClass.isEmpty()) {
                if (!SwitchMLConfig.P4RUNTIME_ADDRESS.from(settings).isEmpty()) {
                    return new DriverRuntime(new P4RuntimeRegistrar(SwitchAddress.parse(external), all));
                }
                throw new IllegalArgumentException(SwitchMLConfig.SWITCH_ADDRESS.key() + "=" + external
                        + " names an external switch, so " + SwitchMLConfig.P4RUNTIME_ADDRESS.key()
                        + " (its P4Runtime server) or " + SwitchMLConfig.REGISTRAR.key()
                        + " (a JobRegistrar class) must say how to install jobs on it");
            }
            try {
                final Class<?> c = Class.forName(registrarClass, true, Thread.currentThread().getContextClassLoader());
                final Constructor<?> ctor = c.getConstructor(SwitchAddress.class, Map.class);
                return new DriverRuntime((JobRegistrar) ctor.newInstance(SwitchAddress.parse(external), all));
            } catch (final ReflectiveOperationException | ClassCastException e) {
                throw new IllegalArgumentException(SwitchMLConfig.REGISTRAR.key() + "=" + registrarClass
                        + ": cannot create a JobRegistrar with a public (SwitchAddress, Map) constructor: " + e, e);
            }
        }
        String host = SwitchMLConfig.SWITCH_HOST.from(settings);
        if (host.isEmpty()) {
            host = driverHost == null || driverHost.isEmpty() ? "127.0.0.1" : driverHost;
        }
        final int lanes = SwitchMLConfig.SWITCH_LANES.from(settings);
        final SoftwareSwitch sw = SoftwareSwitch.start(new SwitchOptions(host,
                Collections.nCopies(lanes, 0), false, FaultPlan.NONE));
        LOG.info("spark-switchml: embedded software switch listening on {}", sw.address());
        return new DriverRuntime(new EmbeddedSwitchRegistrar(sw, true));
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
                LOG.info("spark-switchml: no driver plugin configured; started an embedded switch for local master {}",
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
                    + "classpath)");
        }
    }

    /** The registrar. */
    public JobRegistrar registrar() {
        return registrar;
    }

    /** The switch's dataplane address. */
    public SwitchAddress switchAddress() {
        return registrar.address();
    }

    int newJobId() {
        return nextJobId.incrementAndGet() & 0x7FFF_FFFF;
    }

    /**
     * Installs a job for a barrier stage attempt, or returns the installation already made for it (called
     * from the plugin's RPC handler or, locally, from a task). Every task of the attempt asks with the same
     * spec after the endpoint exchange; the first ask registers (drawing the registration's secret) and the
     * others get the same spec back, so all of them learn the secret without another barrier round. An
     * attempt older than the job's latest registration is refused: a task of a dead attempt must not take
     * the job back from the retry.
     *
     * @return the spec as installed, with the secret the workers need
     */
    synchronized JobSpec register(final JobSpec spec) {
        if (closed) {
            throw new IllegalStateException("spark-switchml driver runtime is closed");
        }
        final JobSpec latest = registered.get(spec.jobId());
        if (latest != null && latest.withSecret(0).equals(spec.withSecret(0))) {
            return latest;
        }
        if (latest != null && latest.generation() > spec.generation()) {
            throw new IllegalStateException("job " + spec.jobName() + ": generation " + spec.generation()
                    + " belongs to a stage attempt older than the registered generation " + latest.generation());
        }
        final JobSpec installed = registrar.register(spec);
        registered.put(spec.jobId(), installed);
        generations.computeIfAbsent(spec.jobId(), id -> Collections.synchronizedList(new ArrayList<>()))
                .add(spec.generation());
        return installed;
    }

    /** Removes a finished job, keeping its final counters when the switch is embedded. */
    void remove(final int jobId) {
        try {
            if (registrar instanceof EmbeddedSwitchRegistrar) {
                final JobCounters c = ((EmbeddedSwitchRegistrar) registrar).counters(jobId);
                if (c != null) {
                    finalCounters.put(jobId, c);
                }
            }
            synchronized (this) {
                registered.remove(jobId);
            }
            registrar.remove(jobId);
        } catch (final RuntimeException e) {
            LOG.debug("spark-switchml: cannot remove job {}: {}", Integer.toUnsignedString(jobId), e.toString());
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
        return finalCounters.get(jobId);
    }

    @Override
    public void close() {
        closed = true;
        registrar.close();
    }
}

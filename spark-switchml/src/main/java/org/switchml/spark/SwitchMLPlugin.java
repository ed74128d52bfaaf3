package org.switchml.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.MetricRegistry;
import org.switchml.client.ClientStats;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.SwitchAddress;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.config.WorkerHosts;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.executor.ExecutorRuntime;
import org.switchml.spark.rpc.Rendezvous;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Enable with {@code spark.plugins=org.switchml.spark.SwitchMLPlugin}. The driver side starts the
 * embedded software switch (or connects to the external one of {@code spark.switchml.switch.address}),
 * plans each barrier stage when its tasks say hello, and installs the stage's job on the switch. Each
 * executor opens one worker socket at start and keeps it for the life of the application: the executor
 * is the switch's worker for all its tasks.
 */
public final class SwitchMLPlugin implements SparkPlugin {
    @Override
    public DriverPlugin driverPlugin() {
        return new Driver();
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new Executor();
    }

    /** Driver side: owns the {@link DriverRuntime}. */
    static final class Driver implements DriverPlugin {
        private DriverRuntime runtime;

        @Override
        public Map<String, String> init(final SparkContext sc, final PluginContext ctx) {
            final Map<String, String> all = DriverRuntimes.settings(sc.conf());
            // Fail the application at start-up on a bad setting, not at the first aggregation.
            SwitchMLConfig.validate(SwitchMLConfig.of(all), all.keySet());
            // A switch that cannot be reached does not stop the application (one warning; fallback later).
            runtime = DriverRuntime.create(SwitchMLConfig.of(all), sc.conf().get("spark.driver.host", "127.0.0.1"), all);
            DriverRuntimes.installPluginRuntime(runtime);
            final DriverRuntime rt = runtime;
            registerDriverMetrics(ctx.metricRegistry(), rt);
            sc.addSparkListener(new SparkListener() {
                @Override
                public void onExecutorRemoved(final SparkListenerExecutorRemoved e) {
                    rt.removeWorker(e.executorId());
                }
            });
            // For executors whose own host is loopback: where the switch is, so they can bind the address that
            // reaches it (WorkerHosts.automatic).
            final SwitchAddress where = rt.switchAddress();
            return where == null ? Map.of() : Map.of(WorkerHosts.SWITCH_HOST_FROM_DRIVER, where.host());
        }

        @Override
        public Object receive(final Object message) {
            if (message instanceof byte[] bytes) {
                final Object reply = runtime.receive(Rendezvous.decode(bytes));
                return reply == null ? null : Rendezvous.encode((Serializable) reply);
            }
            return runtime.receive(message);
        }

        @Override
        public void shutdown() {
            if (runtime != null) {
                DriverRuntimes.clearPluginRuntime(runtime);
                runtime.close();
            }
        }
    }

    /**
     * The driver's metrics (source {@code plugin.org.switchml.spark.SwitchMLPlugin}): fallbacks, and the switch's
     * counters summed over the application's finished jobs (when the switch counts jobs).
     */
    static void registerDriverMetrics(final MetricRegistry m, final DriverRuntime rt) {
        m.register("fallbacks", (Gauge<Long>) rt::fallbackCount);
        m.register("switch.packetsIn", (Gauge<Long>) () -> rt.removedJobTotals().packetsIn());
        m.register("switch.packetsOut", (Gauge<Long>) () -> rt.removedJobTotals().packetsOut());
        m.register("switch.retransmissions", (Gauge<Long>) () -> rt.removedJobTotals().retransmissions());
        for (final DropReason r : DropReason.values()) {
            m.register("switch.drops." + r.name(), (Gauge<Long>) () -> rt.removedJobTotals().drops().get(r));
        }
    }

    /**
     * An executor's metrics: its allreduces, their bytes and times (a histogram in microseconds), and its worker
     * socket's packets and retransmissions. In local mode they sit beside the driver's in the driver's registry.
     */
    static void registerExecutorMetrics(final MetricRegistry m, final ExecutorRuntime rt) {
        m.register("allreduces", (Gauge<Long>) rt::allreduces);
        m.register("allreduceBytes", (Gauge<Long>) rt::allreduceBytes);
        m.register("worker.packetsSent", workerGauge(rt, ClientStats::packetsSent));
        m.register("worker.retransmissions", workerGauge(rt, ClientStats::retransmissions));
        final Histogram times = m.histogram("allreduceTimeMicros");
        rt.onAllReduceTime(ns -> times.update(TimeUnit.NANOSECONDS.toMicros(ns)));
    }

    /** A gauge of one of the worker socket's counters: one snapshot per report, 0 when the executor has no socket. */
    private static Gauge<Long> workerGauge(final ExecutorRuntime rt, final ToLongFunction<ClientStats> counter) {
        return () -> {
            final ClientStats stats = rt.workerStats();
            return stats == null ? 0L : counter.applyAsLong(stats);
        };
    }

    /** Executor side: remembers how to reach the driver plugin and the switch. */
    static final class Executor implements ExecutorPlugin {
        private ExecutorRuntime runtime;

        @Override
        public void init(final PluginContext ctx, final Map<String, String> extraConf) {
            final Map<String, String> settings = DriverRuntimes.settings(ctx.conf());
            settings.putAll(extraConf); // the driver plugin's word on where the switch is
            runtime = ExecutorRuntime.forPlugin(ctx, settings);
            ExecutorRuntime.install(runtime);
            registerExecutorMetrics(ctx.metricRegistry(), runtime);
        }

        @Override
        public void shutdown() {
            if (runtime != null) {
                ExecutorRuntime.uninstall(runtime);
                runtime.close();
            }
        }
    }
}

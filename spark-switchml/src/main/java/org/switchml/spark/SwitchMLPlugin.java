package org.switchml.spark;

import com.codahale.metrics.Counter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.switchml.client.ClientStats;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.SwitchAddress;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.config.WorkerHosts;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.executor.ExecutorRuntime;
import org.switchml.spark.messages.Rendezvous;

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
            runtime =
                    DriverRuntime.create(SwitchMLConfig.of(all), sc.conf().get("spark.driver.host", "127.0.0.1"), all);
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
     * The driver's metrics (source {@code plugin.org.switchml.spark.SwitchMLPlugin}), all counters: fallbacks, and
     * the switch's counters summed over the application's jobs, the finished ones and, read at each report, the
     * running ones (when the switch counts jobs).
     */
    static void registerDriverMetrics(final MetricRegistry m, final DriverRuntime rt) {
        m.register("fallbacks", new CounterView(rt::fallbackCount));
        m.register("switch.packetsIn", new CounterView(() -> rt.jobTotals().packetsIn()));
        m.register("switch.packetsOut", new CounterView(() -> rt.jobTotals().packetsOut()));
        m.register(
                "switch.retransmissions", new CounterView(() -> rt.jobTotals().retransmissions()));
        for (final DropReason r : DropReason.values()) {
            m.register(
                    "switch.drops." + r.name(),
                    new CounterView(() -> rt.jobTotals().drops().get(r)));
        }
    }

    /**
     * An executor's metrics: counters of its allreduces, their bytes, and its worker socket's packets and
     * retransmissions; a timer of its allreduces' times. In local mode they sit beside the driver's in the
     * driver's registry.
     */
    static void registerExecutorMetrics(final MetricRegistry m, final ExecutorRuntime rt) {
        m.register("allreduces", new CounterView(rt::allreduces));
        m.register("allreduceBytes", new CounterView(rt::allreduceBytes));
        m.register("worker.packetsSent", new CounterView(workerCount(rt, ClientStats::packetsSent)));
        m.register("worker.retransmissions", new CounterView(workerCount(rt, ClientStats::retransmissions)));
        final Timer times = m.timer("allreduceTime");
        rt.onAllReduceTime(ns -> times.update(ns, TimeUnit.NANOSECONDS));
    }

    /** One of the worker socket's counters: one snapshot per read, 0 when the executor has no socket. */
    private static LongSupplier workerCount(final ExecutorRuntime rt, final ToLongFunction<ClientStats> counter) {
        return () -> {
            final ClientStats stats = rt.workerStats();
            return stats == null ? 0L : counter.applyAsLong(stats);
        };
    }

    /**
     * A running total kept elsewhere, shown to Spark's sinks as a counter (its {@code Count}, in JMX and in
     * Spark's Prometheus servlet): each read takes the total now, and never reports less than an earlier read did (a job's
     * counters move from the running to the finished ones between two reads of the switch).
     */
    private static final class CounterView extends Counter {
        private final LongSupplier total;
        private final AtomicLong highest = new AtomicLong();

        CounterView(final LongSupplier total) {
            this.total = total;
        }

        @Override
        public long getCount() {
            return highest.accumulateAndGet(total.getAsLong(), Math::max);
        }

        @Override
        public void inc(final long n) {
            throw new UnsupportedOperationException("a view of a total kept elsewhere");
        }

        @Override
        public void dec(final long n) {
            throw new UnsupportedOperationException("a view of a total kept elsewhere");
        }
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

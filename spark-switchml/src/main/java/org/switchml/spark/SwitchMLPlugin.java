package org.switchml.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.switchml.protocol.SwitchAddress;

import java.util.HashMap;
import java.util.Map;

/**
 * Enable with {@code spark.plugins=org.switchml.spark.SwitchMLPlugin}. The driver side starts the
 * embedded software switch (or connects to the external one of {@code spark.switchml.switch.address})
 * and registers jobs on request; executors learn the switch address from the driver plugin's init map
 * and ask the driver to register each job.
 */
public final class SwitchMLPlugin implements SparkPlugin {
    /** Key of the switch address in the map handed from the driver plugin to executor plugins. */
    static final String ADDRESS_KEY = "switch.address";

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
            final Map<String, String> all = new HashMap<>();
            for (final scala.Tuple2<String, String> kv : sc.conf().getAll()) {
                all.put(kv._1(), kv._2());
            }
            // Fail the application at start-up on a bad setting, not at the first aggregation.
            SwitchMLConfig.validate(SwitchMLConfig.of(all), all.keySet());
            runtime = DriverRuntime.create(SwitchMLConfig.of(all), sc.conf().get("spark.driver.host", "127.0.0.1"), all);
            DriverRuntime.installPluginRuntime(runtime);
            final Map<String, String> out = new HashMap<>();
            out.put(ADDRESS_KEY, runtime.switchAddress().toString());
            return out;
        }

        @Override
        public Object receive(final Object message) {
            if (message instanceof RegisterJob) {
                try {
                    // The secret the registration drew; the executor hands it to the job's tasks.
                    return runtime.register(((RegisterJob) message).toSpec()).secret();
                } catch (final RuntimeException e) {
                    return "cannot register job on switch " + runtime.switchAddress() + ": " + e;
                }
            }
            throw new IllegalArgumentException("spark-switchml driver plugin: unexpected message " + message);
        }

        @Override
        public void shutdown() {
            if (runtime != null) {
                DriverRuntime.clearPluginRuntime(runtime);
                runtime.close();
            }
        }
    }

    /** Executor side: remembers how to reach the driver plugin and the switch. */
    static final class Executor implements ExecutorPlugin {
        private ExecutorRuntime runtime;

        @Override
        public void init(final PluginContext ctx, final Map<String, String> extraConf) {
            runtime = new ExecutorRuntime(ctx, SwitchAddress.parse(extraConf.get(ADDRESS_KEY)));
            ExecutorRuntime.install(runtime);
        }

        @Override
        public void shutdown() {
            ExecutorRuntime.uninstall(runtime);
        }
    }
}

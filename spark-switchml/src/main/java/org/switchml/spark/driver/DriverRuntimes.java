package org.switchml.spark.driver;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.executor.ExecutorRuntime;
import scala.Tuple2;

/**
 * Which {@link DriverRuntime} serves this JVM: the driver plugin's, for the life of its SparkContext, or
 * one started on demand for a local master without the plugin (no set-up needed), stopped with its
 * application. A local master's tasks run in this JVM and reach the same runtime as their executor.
 */
public final class DriverRuntimes {
    private static final Logger LOG = LoggerFactory.getLogger(DriverRuntimes.class);
    private static final Object LOCK = new Object();
    private static DriverRuntime pluginRuntime;
    private static DriverRuntime autoRuntime;

    private DriverRuntimes() {}

    /** Every Spark setting of {@code conf}, as a map. */
    public static Map<String, String> settings(final SparkConf conf) {
        final Map<String, String> all = new HashMap<>();
        for (final Tuple2<String, String> kv : conf.getAll()) {
            all.put(kv._1(), kv._2());
        }
        return all;
    }

    /** The driver plugin's runtime, from its start. */
    public static void installPluginRuntime(final DriverRuntime rt) {
        synchronized (LOCK) {
            pluginRuntime = rt;
        }
        offerLocalExecutor();
    }

    /** The driver plugin's runtime is gone. */
    public static void clearPluginRuntime(final DriverRuntime rt) {
        synchronized (LOCK) {
            if (pluginRuntime == rt) {
                pluginRuntime = null;
            }
        }
    }

    /** A task of a local master without the executor plugin finds its executor runtime next to this JVM's driver. */
    private static void offerLocalExecutor() {
        ExecutorRuntime.setLocalFallback(() -> {
            final DriverRuntime d = inThisJvm();
            return d == null ? null : d.localExecutor();
        });
    }

    /** The runtime of this JVM's driver plugin, or the automatic local one, or null. */
    static DriverRuntime inThisJvm() {
        synchronized (LOCK) {
            return pluginRuntime != null ? pluginRuntime : autoRuntime;
        }
    }

    /**
     * The runtime for {@code sc}. Without the plugin, a local master gets an embedded switch started
     * here; a cluster master is an error naming {@code spark.plugins}.
     */
    public static DriverRuntime forContext(final SparkContext sc) {
        synchronized (LOCK) {
            if (pluginRuntime != null && !pluginRuntime.closed()) {
                return pluginRuntime;
            }
            requirePluginUnlessLocal(sc.isLocal(), sc.master());
            if (autoRuntime == null || autoRuntime.closed()) {
                final SparkConf conf = sc.conf();
                final Map<String, String> all = settings(conf);
                SwitchMLConfig.validate(SwitchMLConfig.of(all), all.keySet());
                final DriverRuntime rt =
                        DriverRuntime.create(SwitchMLConfig.of(conf), conf.get("spark.driver.host", "127.0.0.1"), all);
                autoRuntime = rt;
                offerLocalExecutor();
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
                LOG.info(
                        "spark-switchml: no driver plugin configured; started the driver runtime for local master {}",
                        sc.master());
            }
            return autoRuntime;
        }
    }

    /** A cluster master needs the plugin: its executors learn the switch from the driver plugin. */
    public static void requirePluginUnlessLocal(final boolean local, final String master) {
        if (!local) {
            throw new IllegalStateException("spark-switchml: master " + master + " runs executors in "
                    + "other JVMs, which learn the switch from the driver plugin: set spark.plugins="
                    + SwitchMLConfig.PLUGIN_CLASS + " (and put the spark-switchml jar on the executor "
                    + "classpath, e.g. with --jars)");
        }
    }
}

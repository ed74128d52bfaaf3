package org.switchml.spark;

import org.apache.spark.api.plugin.PluginContext;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;

/**
 * What a task needs from its executor: the switch address and a way to have a job registered. With the
 * plugin this is the executor plugin's {@link PluginContext}; with a local master and no plugin, the
 * {@link DriverRuntime} in the same JVM is used directly.
 */
final class ExecutorRuntime {
    private static volatile ExecutorRuntime installed;

    private final PluginContext ctx;
    private final SwitchAddress address;
    private final DriverRuntime local;

    ExecutorRuntime(final PluginContext ctx, final SwitchAddress address) {
        this.ctx = ctx;
        this.address = address;
        this.local = null;
    }

    private ExecutorRuntime(final DriverRuntime local) {
        this.ctx = null;
        this.address = local.switchAddress();
        this.local = local;
    }

    static void install(final ExecutorRuntime rt) {
        installed = rt;
    }

    static void uninstall(final ExecutorRuntime rt) {
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
        final DriverRuntime d = DriverRuntime.inThisJvm();
        if (d != null) {
            return new ExecutorRuntime(d);
        }
        throw new IllegalStateException("spark-switchml: this executor has no switch address; set spark.plugins="
                + SwitchMLPlugin.class.getName() + " and put the spark-switchml jar on the executor classpath");
    }

    SwitchAddress switchAddress() {
        return address;
    }

    /** Registers {@code spec} through the driver; returns it with the secret the registration drew. */
    JobSpec register(final JobSpec spec) {
        if (local != null) {
            return local.register(spec);
        }
        final Object reply;
        try {
            reply = ctx.ask(RegisterJob.of(spec));
        } catch (final Exception e) {
            throw new SwitchMLException("job " + spec.jobName() + ": asking the driver plugin to register failed: " + e, e);
        }
        if (reply instanceof Integer) {
            return spec.withSecret((Integer) reply);
        }
        throw new SwitchMLException(reply instanceof String ? (String) reply
                : "job " + spec.jobName() + ": unexpected reply from the driver plugin: " + reply);
    }
}

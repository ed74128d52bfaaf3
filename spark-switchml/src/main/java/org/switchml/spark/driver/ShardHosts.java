package org.switchml.spark.driver;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.registrar.JobRegistrar;
import org.switchml.spark.registrar.JobServiceRegistrar;

/**
 * Where the driver may place a sharded stage's shards: whether the executors host shards at all
 * ({@code spark.switchml.switch.placement}, and no external switch configured), and the extra shard hosts
 * ({@code spark.switchml.shards.extraHosts}): the driver's own embedded switch, and standalone switches reached
 * through their job services, each tried again while it cannot be reached.
 */
final class ShardHosts implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ShardHosts.class);

    /** An extra shard host and the link to its control plane. */
    record Extra(String name, RegistrarLink link, boolean driver) {}

    private final boolean onExecutors;
    private final List<Extra> extras;

    ShardHosts(final boolean onExecutors, final List<Extra> extras) {
        this.onExecutors = onExecutors;
        this.extras = List.copyOf(extras);
    }

    /** No shards: every stage runs on one switch. */
    static ShardHosts none() {
        return new ShardHosts(false, List.of());
    }

    /**
     * The shard hosts the settings ask for.
     *
     * @param driverLink the link to the driver's embedded switch (the extra host {@code driver})
     * @param all        every Spark setting
     */
    static ShardHosts from(
            final Function<String, String> settings, final RegistrarLink driverLink, final Map<String, String> all) {
        if (!executorsHostShards(settings)) {
            return none();
        }
        final List<Extra> extras = new ArrayList<>();
        for (final String h : SwitchMLConfig.SHARD_EXTRA_HOSTS.from(settings)) {
            if (h.equals(SwitchMLConfig.DRIVER_SHARD)) {
                extras.add(new Extra("the driver's switch", driverLink, true));
            } else {
                if (SwitchMLConfig.AUTH_TOKEN_FILE.from(settings).isEmpty()) {
                    throw new IllegalArgumentException(SwitchMLConfig.SHARD_EXTRA_HOSTS.key()
                            + " names the job service "
                            + h + ", which takes only authenticated calls: set " + SwitchMLConfig.AUTH_TOKEN_FILE.key()
                            + " to the file with its token");
                }
                extras.add(new Extra(
                        "the shard host " + h,
                        new RegistrarLink(
                                () -> JobServiceRegistrar.at(h, all), "the job service of shard host " + h, null),
                        false));
            }
        }
        for (final Extra e : extras) {
            if (e.link().current() == null) {
                LOG.warn(
                        "spark-switchml: {}; sharded stages run without it until it answers",
                        e.link().unreachableReason());
            }
        }
        return new ShardHosts(true, extras);
    }

    /** Whether the settings let executors host shards: no external switch, and a placement that allows it. */
    static boolean executorsHostShards(final Function<String, String> settings) {
        return SwitchMLConfig.SWITCH_ADDRESS.from(settings).isEmpty()
                && SwitchMLConfig.JOB_SERVICE_ADDRESS.from(settings).isEmpty()
                && SwitchMLConfig.REGISTRAR.from(settings).isEmpty()
                && SwitchMLConfig.PLACEMENT.from(settings) != SwitchMLConfig.Placement.DRIVER;
    }

    /** Whether stages of two or more executors run on shards hosted by the executors. */
    boolean onExecutors() {
        return onExecutors;
    }

    /**
     * The extra hosts whose control plane answered when last tried, each with its registrar. Never blocks: the
     * planner calls it on Spark's RPC thread; {@link #refresh} tries lost hosts again.
     */
    List<Map.Entry<Extra, JobRegistrar>> available() {
        final List<Map.Entry<Extra, JobRegistrar>> out = new ArrayList<>();
        for (final Extra e : extras) {
            final JobRegistrar r = e.link().current();
            if (r != null) {
                out.add(Map.entry(e, r));
            }
        }
        return out;
    }

    /** Tries again (at most every two seconds each) the extra hosts that did not answer; may block, bounded. */
    void refresh() {
        for (final Extra e : extras) {
            e.link().available();
        }
    }

    @Override
    public void close() {
        for (final Extra e : extras) {
            if (!e.driver()) {
                e.link().close();
            }
        }
    }
}

package org.switchml.spark.ml.linear;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.apache.spark.SparkContext;
import org.slf4j.Logger;
import org.switchml.spark.SwitchMLDriver;
import org.switchml.spark.SwitchMLPlugin;

/**
 * Where a fit cannot use the switch, the estimator trains as stock MLlib does: a cluster master without the
 * plugin (its executors would not know where the switch is), or dynamic allocation on a cluster, under which
 * Spark refuses barrier stages ({@link SwitchMLDriver#barrierStagesRefused}). One warning per application,
 * estimator and reason.
 */
final class StockFallback {
    /** Applications already warned, by estimator and reason. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private StockFallback() {}

    /** Why the switch cannot be used, and what to change. */
    record Reason(String why, String advice) {}

    /** Why a fit in {@code sc} cannot use the switch; empty when it can. */
    static Optional<Reason> reason(final SparkContext sc) {
        if (!switchAvailable(sc)) {
            return Optional.of(new Reason(
                    "master " + sc.master() + " without spark.plugins=" + SwitchMLPlugin.class.getName(),
                    "Its executors learn the switch from the driver plugin: submit "
                            + "with bin/switchml-submit, or set spark.plugins and put the spark-switchml jar on the executors "
                            + "(--jars)."));
        }
        return SwitchMLDriver.barrierStagesRefused(sc)
                .map(refused -> new Reason(
                        refused, "Set spark.dynamicAllocation.enabled=false to aggregate through the switch."));
    }

    /**
     * A local master starts the embedded switch by itself; a cluster master needs the plugin, whose driver
     * side tells the executors where the switch is.
     */
    private static boolean switchAvailable(final SparkContext sc) {
        if (sc.isLocal()) {
            return true;
        }
        final String plugin = SwitchMLPlugin.class.getName();
        for (final String key : new String[] {"spark.plugins", "spark.plugins.defaultList"}) {
            for (final String name : sc.conf().get(key, "").split(",")) {
                if (name.trim().equals(plugin)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Trains with stock MLlib ({@code stock}, named {@code stockName} in the warning) for {@code reason}, and
     * reports the fit: not via the switch, with its time and iterations.
     */
    static <M> M train(
            final SparkContext sc,
            final Logger log,
            final String uid,
            final String stockName,
            final Reason reason,
            final Supplier<M> stock,
            final ToIntFunction<M> iterations,
            final Consumer<FitReport> report) {
        if (WARNED.add(sc.applicationId() + " " + stockName + ": " + reason.why())) {
            log.warn(
                    "{}: {}; training with stock MLlib {} instead (same model, no switch). {} This warning is given "
                            + "once per application.",
                    uid,
                    reason.why(),
                    stockName,
                    reason.advice());
        }
        final long t0 = System.nanoTime();
        final M m = stock.get();
        report.accept(new FitReport(
                false,
                "stock MLlib (" + reason.why() + ")",
                new FitReport.Timing(0, 0, (System.nanoTime() - t0) / 1_000_000, 0, Double.NaN),
                new FitReport.Loop(-1, iterations.applyAsInt(m), 0, 0),
                FitReport.SwitchTraffic.NONE));
        return m;
    }
}

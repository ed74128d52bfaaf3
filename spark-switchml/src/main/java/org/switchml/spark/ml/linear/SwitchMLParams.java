package org.switchml.spark.ml.linear;

import java.util.Locale;
import org.apache.spark.SparkContext;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * The params every SwitchML estimator adds to its MLlib parent's, made the same way for each: {@code precision}
 * ({@code fp64} or {@code fp32}, for the fit's sums; unset, {@code spark.switchml.precision} decides) and
 * {@code checkpointInterval} (return the optimizer state to the driver every that many evaluations, so that a
 * failure retries from there; 0: never). Spark finds an estimator's params through its own public methods, so each
 * estimator declares the accessors; their fields come from here.
 */
public final class SwitchMLParams {
    private SwitchMLParams() {}

    /** The {@code precision} param of {@code parent}; its default is {@code fp64}. */
    public static Param<String> precision(final Params parent) {
        return new Param<>(
                parent,
                "precision",
                "precision of the sums through the switch during the fit: fp64 or fp32 (statistics always use fp64); "
                        + "unset, spark.switchml.precision decides",
                ParamValidators.inArray(new String[] {"fp64", "fp32"}));
    }

    /** The {@code checkpointInterval} param of {@code parent}; its default is 0. */
    public static IntParam checkpointInterval(final Params parent) {
        return new IntParam(
                parent,
                "checkpointInterval",
                "return the optimizer state to the driver every this many evaluations, so that a failure retries "
                        + "from there (0: never)",
                ParamValidators.gtEq(0));
    }

    /** A precision as the param holds it: lower case. */
    public static String normalized(final String precision) {
        return precision.toLowerCase(Locale.ROOT);
    }

    /**
     * The precision of a fit of {@code owner} in {@code sc}: its {@code precision} param when set, else
     * {@code spark.switchml.precision} as for every call (the application's conf, or the thread's local property).
     */
    public static SwitchMLConfig.Precision precision(
            final SparkContext sc, final Params owner, final Param<String> precision) {
        return owner.isSet(precision)
                ? SwitchMLConfig.Precision.valueOf(owner.getOrDefault(precision).toUpperCase(Locale.ROOT))
                : SwitchMLConfig.PRECISION.from(SwitchMLConfig.forCall(sc));
    }
}

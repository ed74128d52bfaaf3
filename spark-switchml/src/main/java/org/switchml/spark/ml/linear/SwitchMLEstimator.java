package org.switchml.spark.ml.linear;

import java.util.Locale;
import java.util.function.Function;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.Params;
import scala.Option;

/**
 * What every SwitchML estimator adds to its MLlib parent, the same way for each: the params {@link #precision()}
 * and {@link #checkpointInterval()}, the last fit's report ({@link #lastFit()}) and the listener of its fits
 * ({@link #setListener}). Spark finds the params through these public methods; their values live in the
 * estimator's {@link SwitchMLParts}.
 *
 * @param <E> the estimator, which the setters return
 */
public interface SwitchMLEstimator<E extends SwitchMLEstimator<E>> extends Params {
    /** This estimator's own params and reports. */
    SwitchMLParts switchml();

    /**
     * Precision of the fit's sums through the switch: {@code fp64} (the default) or {@code fp32}. Unset, the fit
     * uses {@code spark.switchml.precision} (the application's conf, or the thread's local property).
     */
    default Param<String> precision() {
        return switchml().precision();
    }

    /**
     * The precision a fit started now on this thread would use: the param when set, else
     * {@code spark.switchml.precision} of the active Spark application (the thread's local property first), else
     * the param's default.
     *
     * @see #precision()
     */
    default String getPrecision() {
        if (isSet(precision())) {
            return getOrDefault(precision());
        }
        final Option<SparkContext> active = SparkContext$.MODULE$.getActive();
        return active.isDefined()
                ? SwitchMLParams.precision(active.get(), this, precision())
                        .name()
                        .toLowerCase(Locale.ROOT)
                : getOrDefault(precision());
    }

    /** @see #precision() */
    @SuppressWarnings("unchecked")
    default E setPrecision(final String value) {
        set(precision(), SwitchMLParams.normalized(value));
        return (E) this;
    }

    /** Evaluations between checkpoints of the optimizer state to the driver (0, the default: never). */
    default IntParam checkpointInterval() {
        return switchml().checkpointInterval();
    }

    /** @see #checkpointInterval() */
    default int getCheckpointInterval() {
        return (Integer) getOrDefault(checkpointInterval());
    }

    /** @see #checkpointInterval() */
    @SuppressWarnings("unchecked")
    default E setCheckpointInterval(final int value) {
        set(checkpointInterval(), value);
        return (E) this;
    }

    /**
     * How the last fit of this instance went (null before the first), switch counters included. Copies made by
     * {@code copy} (as {@code CrossValidator} and {@code fit(dataset, paramMap)} do) report to their own
     * {@code lastFit} and to the {@link #setListener listener} they share.
     */
    default FitReport lastFit() {
        return switchml().reports().last();
    }

    /**
     * Sets the listener told about every iteration of each fit while it runs, and about each fit's end (null:
     * none). Not a Spark ML param: it is not saved with the estimator; {@code copy} keeps it, so fits inside
     * {@code Pipeline} or {@code CrossValidator} report to it as well (from several threads at once with
     * {@code CrossValidator.setParallelism}).
     */
    @SuppressWarnings("unchecked")
    default E setListener(final FitListener value) {
        switchml().reports().listener(value);
        return (E) this;
    }

    /** @see #setListener */
    default FitListener getListener() {
        return switchml().reports().listener();
    }

    /**
     * An estimator its parent's {@code load} read: the drop-in as saved, or a stock estimator's uid and params on a
     * new drop-in made by {@code withUid} (how a stock-saved estimator, or a Spark Connect client's, becomes one).
     */
    static <P extends Params, D extends P> D loaded(
            final P saved, final Class<D> dropIn, final Function<String, D> withUid) {
        return dropIn.isInstance(saved)
                ? dropIn.cast(saved)
                : saved.copyValues(withUid.apply(saved.uid()), ParamMap.empty());
    }
}

package org.switchml.spark.ml.classification;

/**
 * Told about a {@link SwitchMLLogisticRegression} fit while it runs: once per entry of the model's
 * {@code objectiveHistory} (the initial point, then every optimizer iteration), in order, and once at
 * the end. Set with {@link SwitchMLLogisticRegression#setListener}. Calls come on one spark-switchml
 * thread of the driver, not the thread that called {@code fit}; a listener must return quickly (the
 * next reports queue behind it) and should not throw (an exception is logged and dropped).
 */
@FunctionalInterface
public interface FitListener {
    /** An optimizer iteration ended (or, for iteration 0, the objective at the initial point is known). */
    void onIteration(IterationReport report);

    /** The fit ended; {@code report} is what {@link SwitchMLLogisticRegression#lastFit()} then returns. */
    default void onFitEnd(final FitReport report) {
    }
}

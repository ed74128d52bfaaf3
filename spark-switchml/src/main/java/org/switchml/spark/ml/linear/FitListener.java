package org.switchml.spark.ml.linear;

/**
 * Told about a fit of one of the SwitchML estimators ({@code SwitchMLLogisticRegression}, {@code SwitchMLLinearSVC},
 * {@code SwitchMLLinearRegression}) while it runs: once per entry of the model's
 * {@code objectiveHistory} (the initial point, then every optimizer iteration), in order, and once at
 * the end. Set with the estimator's {@code setListener}. Calls come on one spark-switchml
 * thread of the driver, not the thread that called {@code fit}; a listener must return quickly (the
 * next reports queue behind it) and should not throw (an exception is logged and dropped).
 */
@FunctionalInterface
public interface FitListener {
    /** An optimizer iteration ended (or, for iteration 0, the objective at the initial point is known). */
    void onIteration(IterationReport report);

    /** The fit ended; {@code report} is what the estimator's {@code lastFit()} then returns. */
    default void onFitEnd(final FitReport report) {}
}

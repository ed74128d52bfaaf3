package org.switchml.spark.ml.classification;

/**
 * How the last fit of a {@link SwitchMLLogisticRegression} went, for logs and benchmarks (read it with
 * {@link SwitchMLLogisticRegression#lastFit()}).
 *
 * @param readMs             reading the input into the cached batches (one ordinary Spark job)
 * @param statisticsMs       the feature statistics (one barrier stage, two allreduces)
 * @param fitMs              the optimizer loop (one barrier stage per checkpoint)
 * @param modelMs            building the model and its training summary
 * @param evaluations        objective evaluations (allreduces) in the loop
 * @param iterations         optimizer iterations (MLlib's totalIterations)
 * @param stages             barrier stages of the loop
 * @param viaSwitch          false if the loop fell back to treeAggregate
 * @param reason             why the optimizer stopped
 * @param msPerEvaluation    steady-state time per evaluation inside the loop's stages (partition 0's clock,
 *                           from the first update to the last; excludes stage start-up), NaN if fewer than 2
 */
public record FitReport(long readMs, long statisticsMs, long fitMs, long modelMs, int evaluations, int iterations,
                        int stages, boolean viaSwitch, String reason, double msPerEvaluation) {
}

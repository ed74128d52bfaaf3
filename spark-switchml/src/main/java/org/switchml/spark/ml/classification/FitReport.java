package org.switchml.spark.ml.classification;

/**
 * How a fit of a {@link SwitchMLLogisticRegression} went, for logs, benchmarks and monitoring (read it
 * with {@link SwitchMLLogisticRegression#lastFit()}, or receive it with {@link FitListener#onFitEnd}).
 *
 * @param readMs             reading the input into the cached batches (one ordinary Spark job)
 * @param statisticsMs       the feature statistics (one barrier stage, two allreduces)
 * @param fitMs              the optimizer loop (one barrier stage per checkpoint)
 * @param modelMs            building the model and its training summary
 * @param evaluations        objective evaluations (allreduces) in the loop
 * @param iterations         optimizer iterations (MLlib's totalIterations)
 * @param stages             barrier stages of the loop
 * @param viaSwitch          false if any part fell back (to treeAggregate, or to stock MLlib)
 * @param reason             why the optimizer stopped, or why stock MLlib trained instead
 * @param msPerEvaluation    steady-state time per evaluation inside the loop's stages (partition 0's clock,
 *                           from the first update to the last; excludes stage start-up), NaN if fewer than 2
 * @param megabytes          payload each worker sent through the switch, statistics included (elements
 *                           times 8 bytes in fp64, 4 in fp32)
 * @param packetsIn          contribution packets the switch accepted for this fit's jobs, retransmissions
 *                           included; -1 when unknown (an external switch keeps its counters)
 * @param packetsOut         result packets the switch sent for them; -1 when unknown
 * @param retransmissions    contributions the switch recognised as retransmissions; -1 when unknown
 * @param drops              packets of these jobs the switch dropped (any reason); -1 when unknown
 * @param fallbacks          barrier stages that found the switch unreachable and ran on the driver with
 *                           treeAggregate instead (each is logged as a warning)
 * @param nonFiniteEvaluations evaluations where some partition's loss or gradient was not finite (flagged
 *                           through the switch, never summed, and taken as an infinite objective)
 */
public record FitReport(long readMs, long statisticsMs, long fitMs, long modelMs, int evaluations, int iterations,
                        int stages, boolean viaSwitch, String reason, double msPerEvaluation, double megabytes,
                        long packetsIn, long packetsOut, long retransmissions, long drops, int fallbacks,
                        int nonFiniteEvaluations) {
}

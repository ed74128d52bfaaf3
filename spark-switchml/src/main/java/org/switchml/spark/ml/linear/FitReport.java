package org.switchml.spark.ml.linear;

/**
 * How a fit of a SwitchML estimator went, for logs, benchmarks and monitoring (read it with the estimator's
 * {@code lastFit()}, or receive it with {@link FitListener#onFitEnd}).
 *
 * @param viaSwitch false if any part fell back (to treeAggregate, or to stock MLlib); a stage summed in memory
 *                  ({@link SwitchTraffic#inMemoryStages()}) computes what the switch would, and is no fallback
 * @param reason    why the optimizer stopped, or why stock MLlib trained instead
 * @param timing    where the fit's time went
 * @param loop      what the optimizer loop did
 * @param traffic   what went through the switch
 */
public record FitReport(boolean viaSwitch, String reason, Timing timing, Loop loop, SwitchTraffic traffic) {

    /**
     * Where the fit's time went.
     *
     * @param readMs          reading the input into the cached batches (one ordinary Spark job)
     * @param statisticsMs    the feature statistics (one barrier stage, two allreduces)
     * @param fitMs           the optimizer loop (one barrier stage per checkpoint)
     * @param modelMs         building the model and its training summary
     * @param msPerEvaluation steady-state time per evaluation inside the loop's stages (partition 0's clock,
     *                        from the first update to the last; excludes stage start-up), NaN if fewer than 2
     */
    public record Timing(long readMs, long statisticsMs, long fitMs, long modelMs, double msPerEvaluation) {}

    /**
     * What the optimizer loop did.
     *
     * @param evaluations          objective evaluations (allreduces) in the loop; -1 when stock MLlib trained
     * @param iterations           optimizer iterations (MLlib's totalIterations)
     * @param stages               barrier stages of the loop
     * @param nonFiniteEvaluations evaluations where some partition's loss or gradient was not finite (flagged
     *                             through the switch, never summed, and taken as an infinite objective)
     */
    public record Loop(int evaluations, int iterations, int stages, int nonFiniteEvaluations) {}

    /**
     * What went through the switch, statistics included.
     *
     * @param megabytes       payload each worker sent through the switch (elements times 8 bytes in fp64, 4
     *                        in fp32)
     * @param packetsIn       contribution packets the switch accepted for this fit's jobs, retransmissions
     *                        included; -1 when unknown (an external switch keeps its counters)
     * @param packetsOut      result packets the switch sent for them; -1 when unknown
     * @param retransmissions contributions the switch recognised as retransmissions; -1 when unknown
     * @param drops           packets of these jobs the switch dropped (any reason); -1 when unknown
     * @param fallbacks       barrier stages that found the switch unreachable and ran on the driver with
     *                        treeAggregate instead (each is logged as a warning)
     * @param inMemoryStages  barrier stages whose tasks all ran in one executor, which computed the switch's
     *                        sums itself, bit for bit, sending nothing ({@code spark.switchml.localShortcut})
     */
    public record SwitchTraffic(
            double megabytes,
            long packetsIn,
            long packetsOut,
            long retransmissions,
            long drops,
            int fallbacks,
            int inMemoryStages) {
        /** A fit that never used the switch: nothing sent, counters unknown. */
        static final SwitchTraffic NONE = new SwitchTraffic(0, -1, -1, -1, -1, 0, 0);
    }
}

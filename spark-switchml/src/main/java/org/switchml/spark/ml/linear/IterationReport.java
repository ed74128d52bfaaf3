package org.switchml.spark.ml.linear;

import java.util.Locale;

/**
 * One entry of a running fit's objective history, as the log line and {@link FitListener} see it.
 *
 * @param uid             the estimator's uid
 * @param iteration       optimizer iterations completed (MLlib's totalIterations so far)
 * @param maxIter         the maxIter param
 * @param loss            the objective (with the L1 term under elastic net), as in objectiveHistory
 * @param gradientNorm    L2 norm of the (pseudo-)gradient at the current point
 * @param evaluations     objective evaluations (allreduces) since the previous report
 * @param totalEvaluations evaluations since the fit's loop started
 * @param millis          wall time since the previous report, as task 0 measured it (the first report
 *                        includes the stage's start-up); 0 when unknown
 * @param megabytes       payload each worker sent through the switch since the previous report: the
 *                        vector's elements times 8 bytes (fp64) or 4 (fp32), per evaluation
 * @param retransmissions contributions the switch recognised as retransmissions since the previous
 *                        report, read live from an embedded switch; -1 when the switch is external (its
 *                        counters are not visible here) or the loop fell back to the driver
 * @param computeMillis   of {@code millis}: the partitions' loss and gradient (one task's, on the executor
 *                        that reported; its other tasks ran beside it), NaN when unknown
 * @param updateMillis    of {@code millis}: the optimizer's update after the allreduce, NaN when unknown;
 *                        the rest of {@code millis} is the allreduce through the switch, waiting for the
 *                        slowest worker, and (in the first report) the stage's start-up
 * @param nonFinite       an evaluation since the previous report had a non-finite loss or gradient on
 *                        some partition: it went through the switch as a flag, never as NaN or infinity,
 *                        and counted as an infinite objective (the line search then shortens its step)
 */
public record IterationReport(
        String uid,
        int iteration,
        int maxIter,
        double loss,
        double gradientNorm,
        int evaluations,
        int totalEvaluations,
        double millis,
        double megabytes,
        long retransmissions,
        double computeMillis,
        double updateMillis,
        boolean nonFinite) {

    /** The log line: {@code uid: iteration i/N: loss ..., |gradient| ..., ms, MB, retransmissions}. */
    public String line() {
        return String.format(
                Locale.ROOT,
                "%s: iteration %d/%d: loss %.10g, |gradient| %.4g, %d evaluation%s, "
                        + "%.1f ms (compute %.1f, update %.1f), %.4g MB aggregated per worker, %s%s",
                uid,
                iteration,
                maxIter,
                loss,
                gradientNorm,
                evaluations,
                evaluations == 1 ? "" : "s",
                millis,
                computeMillis,
                updateMillis,
                megabytes,
                retransmissions < 0 ? "retransmissions n/a" : retransmissions + " retransmissions",
                nonFinite ? "; a non-finite loss or gradient was flagged (treated as +infinity)" : "");
    }
}

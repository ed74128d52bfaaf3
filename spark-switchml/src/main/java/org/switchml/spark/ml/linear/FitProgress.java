package org.switchml.spark.ml.linear;

import java.util.Optional;
import org.slf4j.Logger;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.ReplicatedLoop;

/**
 * Turns the loop's per-evaluation reports (task 0's scalars, live through the plugin's endpoint) into
 * one {@link IterationReport} per entry of the objective history: a log line at INFO and the user's
 * {@link FitListener}. Runs on the driver's single progress thread, in evaluation order.
 */
final class FitProgress implements ReplicatedLoop.Progress {
    private final String uid;
    private final Logger log;
    private final int maxIter;
    private final double megabytesPerEvaluation;
    private final FitListener listener;
    private final SwitchUse use;

    private int reportedHistory;
    private int totalEvaluations;
    private int nonFiniteEvaluations;
    private int evaluationsSince;
    private double millisSince;
    private double computeSince;
    private double updateSince;
    private boolean nonFiniteSince;
    private double lastClock = Double.NaN;
    private int liveJob = -1;
    private long liveRetransmissions;
    private long retransmissionsSince;

    /** @param log the estimator's logger, which the iterations' lines go to */
    FitProgress(
            final String uid,
            final Logger log,
            final int maxIter,
            final double megabytesPerEvaluation,
            final FitListener listener,
            final SwitchUse use) {
        this.uid = uid;
        this.log = log;
        this.maxIter = maxIter;
        this.megabytesPerEvaluation = megabytesPerEvaluation;
        this.listener = listener;
        this.use = use;
    }

    @Override
    public void onIteration(final int iteration, final double[] scalars, final long nanos) {
        onIteration(iteration, scalars, nanos, -1);
    }

    @Override
    public void onIteration(final int loopIteration, final double[] s, final long nanos, final int jobId) {
        totalEvaluations++;
        evaluationsSince++;
        final double clock = s[FitBody.CLOCK];
        // A report that arrives only with its stage's end carries no time; task 0's clock tells it.
        final double millis =
                nanos >= 0 ? nanos / 1e6 : !Double.isNaN(lastClock) && clock >= lastClock ? clock - lastClock : 0.0;
        lastClock = clock;
        millisSince += millis;
        computeSince += s.length > FitBody.UPDATE_MS ? s[FitBody.COMPUTE_MS] : Double.NaN;
        updateSince += s.length > FitBody.UPDATE_MS ? s[FitBody.UPDATE_MS] : Double.NaN;
        if (s[FitBody.EVALUATED] == Double.POSITIVE_INFINITY) {
            nonFiniteSince = true;
            nonFiniteEvaluations++;
        }
        final int history = (int) s[FitBody.HISTORY];
        if (history <= reportedHistory) {
            return; // inside a line search: no new entry yet
        }
        reportedHistory = history;
        final boolean known = countRetransmissions(jobId);
        final IterationReport r = new IterationReport(
                uid,
                (int) s[FitBody.ITERATIONS],
                maxIter,
                s[FitBody.LOSS],
                s[FitBody.GRADIENT_NORM],
                evaluationsSince,
                totalEvaluations,
                millisSince,
                evaluationsSince * megabytesPerEvaluation,
                known ? retransmissionsSince : -1,
                computeSince,
                updateSince,
                nonFiniteSince);
        if (nonFiniteSince) {
            log.warn("{}", r.line());
        } else {
            log.info("{}", r.line());
        }
        if (listener != null) {
            try {
                listener.onIteration(r);
            } catch (final RuntimeException e) {
                log.warn("{}: the fit listener failed on iteration {}: {}", uid, r.iteration(), e.toString());
            }
        }
        evaluationsSince = 0;
        millisSince = 0;
        computeSince = 0;
        updateSince = 0;
        nonFiniteSince = false;
        retransmissionsSince = 0;
    }

    /**
     * Live from an embedded switch: adds the job's retransmissions since the last read (each stage is a
     * new job); false when they cannot be known (an external switch, or the driver path).
     */
    private boolean countRetransmissions(final int jobId) {
        if (jobId < 0 || !use.countsJobs()) {
            return false;
        }
        // Empty: the stage's job is already removed (the fit's totals have it), or a busy or closing switch
        // (counted with the next report, or in the fit's totals).
        final Optional<JobCounters> live = use.liveCounters(jobId);
        if (live.isEmpty()) {
            return true;
        }
        final JobCounters c = live.get();
        if (jobId != liveJob) {
            liveJob = jobId;
            liveRetransmissions = 0;
        }
        retransmissionsSince += c.retransmissions() - liveRetransmissions;
        liveRetransmissions = c.retransmissions();
        return true;
    }

    /** Evaluations whose loss or gradient was not finite somewhere. */
    int nonFiniteEvaluations() {
        return nonFiniteEvaluations;
    }
}

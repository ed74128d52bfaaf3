package org.switchml.spark.ml.linear;

import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.slf4j.Logger;
import org.switchml.optim.QuasiNewton;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * Runs a fit's optimizer over its objective in the replicated loop: one barrier stage, or one per
 * {@code checkpointInterval} evaluations (the loop's checkpoints), each named by its job description as it
 * starts (Spark fixes a job's description when it is submitted, so it names the stage's span, not the current
 * iteration; that one is in the log), with the fit's progress reported as it goes ({@link FitProgress}).
 */
final class FitLoop {
    private FitLoop() {}

    /**
     * The loop's outcome over all its stages.
     *
     * @param state           the optimizer's final state
     * @param evaluations     evaluations (allreduces) in all
     * @param stages          stages of the loop (barrier stages, or runs on the driver where one fell back)
     * @param msPerEvaluation steady time per evaluation: task 0's clock between updates of one stage
     * @param nonFinite       evaluations where some partition's loss or gradient was not finite
     */
    record Fitted(double[] state, int evaluations, int stages, double msPerEvaluation, int nonFinite) {}

    /**
     * What a fit runs, and how.
     *
     * @param uid                the estimator's, for its log lines and listener reports
     * @param log                the estimator's logger
     * @param maxIter            the optimizer's iteration limit
     * @param checkpointInterval evaluations per stage (0: the whole fit in one stage)
     * @param precision          of the sums through the switch
     * @param listener           the user's, or null
     */
    record Settings(
            String uid,
            Logger log,
            int maxIter,
            int checkpointInterval,
            SwitchMLConfig.Precision precision,
            FitListener listener) {}

    /** Runs {@code optimizer} from {@code x0} over {@code batches}; names the stages' jobs with {@code names}. */
    static Fitted run(
            final JavaRDD<InstanceBatch> batches,
            final LinearObjective objective,
            final QuasiNewton optimizer,
            final double[] x0,
            final Settings settings,
            final SwitchUse use,
            final JobNames names) {
        final int maxEvaluations = FitBody.maxEvaluations(settings.maxIter(), optimizer.maxEvaluationsPerSearch());
        final int interval = settings.checkpointInterval();
        final boolean fp64 = settings.precision() == SwitchMLConfig.Precision.FP64;
        final int length = objective.vectorLength();
        final FitProgress progress = new FitProgress(
                settings.uid(),
                settings.log(),
                settings.maxIter(),
                length * (fp64 ? 8.0 : 4.0) / 1e6,
                settings.listener(),
                use);
        final ReplicatedLoop.Progress stages = new ReplicatedLoop.Progress() {
            @Override
            public void onIteration(final int iteration, final double[] scalars, final long nanos) {
                progress.onIteration(iteration, scalars, nanos);
            }

            @Override
            public void onIteration(final int iteration, final double[] scalars, final long nanos, final int jobId) {
                progress.onIteration(iteration, scalars, nanos, jobId);
            }

            @Override
            public void onStageStarted(final int evaluations, final double[] state) {
                final int span =
                        interval > 0 ? Math.min(interval, maxEvaluations - evaluations) : maxEvaluations - evaluations;
                final int fromIteration = optimizer.iterations(state);
                final int toIteration = Math.min(settings.maxIter(), fromIteration + span);
                names.describe(String.format(
                        Locale.ROOT,
                        "iterations %d to <=%d of %d (evaluations %d-%d%s)",
                        fromIteration,
                        toIteration,
                        settings.maxIter(),
                        evaluations + 1,
                        evaluations + span,
                        interval > 0 ? ", then a checkpoint" : ", the whole fit in this barrier stage"));
            }
        };
        final ReplicatedLoop.Result r = ReplicatedLoop.run(
                batches.rdd(),
                optimizer.start(x0),
                length,
                new FitBody(objective, optimizer),
                new ReplicatedLoop.Options(maxEvaluations, interval, 0, settings.precision()),
                stages);
        use.ran(r, length, fp64);
        // steady time per evaluation: task 0's clock between updates of one stage
        final List<double[]> scalars = r.scalars();
        double steadyMs = 0;
        int steadyCount = 0;
        for (final ReplicatedLoop.Stage stage : r.stages()) {
            for (int i = stage.firstIteration() + 1; i < stage.firstIteration() + stage.iterations(); i++) {
                steadyMs += scalars.get(i)[FitBody.CLOCK] - scalars.get(i - 1)[FitBody.CLOCK];
                steadyCount++;
            }
        }
        return new Fitted(
                r.state(),
                r.iterations(),
                r.stages().size(),
                steadyCount == 0 ? Double.NaN : steadyMs / steadyCount,
                progress.nonFiniteEvaluations());
    }
}

package org.switchml.spark.ml.linear;

import org.apache.spark.SparkContext;

/**
 * Names the Spark jobs a fit starts on this thread after the caller's own description ("the caller's job /
 * SwitchMLLogisticRegression uid: what"), and restores the caller's description when closed.
 */
final class JobNames implements AutoCloseable {
    private static final String JOB_DESCRIPTION = "spark.job.description";

    private final SparkContext sc;
    private final String callers;
    private final String prefix;

    /** @param prefix the estimator, e.g. {@code "SwitchMLLogisticRegression uid"} */
    JobNames(final SparkContext sc, final String prefix) {
        this.sc = sc;
        this.callers = sc.getLocalProperty(JOB_DESCRIPTION);
        this.prefix = prefix;
    }

    /** Names the jobs that follow. */
    void describe(final String what) {
        final String text = prefix + ": " + what;
        sc.setJobDescription(callers == null || callers.isEmpty() ? text : callers + " / " + text);
    }

    @Override
    public void close() {
        sc.setLocalProperty(JOB_DESCRIPTION, callers);
    }
}

package org.switchml.spark.ml.linear;

import java.io.Serializable;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;

/**
 * One SwitchML estimator's own params (owned by it, with their defaults set) and reports: what
 * {@link SwitchMLEstimator} reads. Made in the estimator's constructor, after its parent's.
 */
public final class SwitchMLParts implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Param<String> precision;
    private final IntParam checkpointInterval;
    private final FitReports reports = new FitReports();

    /** The params of {@code owner}, with their defaults ({@code fp64}, 0) set on it. */
    public SwitchMLParts(final Params owner) {
        this.precision = SwitchMLParams.precision(owner);
        this.checkpointInterval = SwitchMLParams.checkpointInterval(owner);
        owner.setDefault(precision, "fp64");
        owner.setDefault(checkpointInterval, 0);
    }

    Param<String> precision() {
        return precision;
    }

    IntParam checkpointInterval() {
        return checkpointInterval;
    }

    /** The estimator's reports and listener. */
    public FitReports reports() {
        return reports;
    }
}

package org.switchml.spark.ml.linear;

import java.io.Serializable;
import org.slf4j.Logger;

/**
 * One estimator's reports: its last fit's {@link FitReport} and the {@link FitListener} its fits tell. Neither is an
 * ML param, so neither is saved with the estimator; an estimator's copies (as {@code CrossValidator} makes them)
 * get reports of their own and share the listener; a deserialized estimator's start empty.
 */
public final class FitReports implements Serializable {
    private static final long serialVersionUID = 1L;

    private transient volatile FitReport last;
    private transient volatile FitListener listener;

    /** The last fit's report, or null before the first. */
    public FitReport last() {
        return last;
    }

    /** The listener (null: none). */
    public FitListener listener() {
        return listener;
    }

    /** Sets the listener (null: none). */
    public void listener(final FitListener value) {
        listener = value;
    }

    /** Reports a fit: {@link #last()}, a line in {@code log}, and the listener's {@link FitListener#onFitEnd}. */
    public void finish(final String uid, final Logger log, final FitReport report) {
        last = report;
        log.info("{}: {}", uid, report);
        final FitListener l = listener;
        if (l != null) {
            try {
                l.onFitEnd(report);
            } catch (final RuntimeException e) {
                log.warn("{}: the fit listener failed at the fit's end: {}", uid, e.toString());
            }
        }
    }
}

package org.switchml.examples;

import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.switchml.spark.ml.classification.MllibParity;

/**
 * The one local Spark session of a test class ({@link MllibParity#localSession}, named after the class), made before
 * its first test and stopped after its last, when the class holds it as a static {@code @RegisterExtension} field;
 * and how many Spark tasks fail while a part of a test runs.
 */
final class LocalSpark implements BeforeAllCallback, AfterAllCallback {
    private final boolean localShortcut;
    private SparkSession session;

    /** A session whose sums take the in-memory shortcut of a local master ({@code localShortcut}) or go through the switch. */
    LocalSpark(final boolean localShortcut) {
        this.localShortcut = localShortcut;
    }

    @Override
    public void beforeAll(final ExtensionContext context) {
        session = MllibParity.localSession(context.getRequiredTestClass().getSimpleName(), localShortcut);
    }

    @Override
    public void afterAll(final ExtensionContext context) {
        if (session != null) {
            session.stop();
        }
    }

    /** The class's session. */
    SparkSession session() {
        return session;
    }

    /**
     * Runs {@code body} and returns how many Spark tasks failed meanwhile, counted once Spark's listeners have heard
     * of every event so far (a wait bounded by 60 s): a bad record must be one line, not a task retried.
     */
    int failedTasks(final Runnable body) {
        final AtomicInteger failed = new AtomicInteger();
        final SparkListener listener = new SparkListener() {
            @Override
            public void onTaskEnd(final SparkListenerTaskEnd end) {
                if (!end.taskInfo().successful()) {
                    failed.incrementAndGet();
                }
            }
        };
        session.sparkContext().addSparkListener(listener);
        try {
            body.run();
            try {
                session.sparkContext().listenerBus().waitUntilEmpty(60_000);
            } catch (final TimeoutException e) {
                throw new AssertionError("Spark's listener bus did not drain in 60 s", e);
            }
        } finally {
            session.sparkContext().removeSparkListener(listener);
        }
        return failed.get();
    }
}

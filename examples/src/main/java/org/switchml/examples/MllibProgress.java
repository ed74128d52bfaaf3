package org.switchml.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.SparkContext;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import scala.jdk.javaapi.CollectionConverters;

/**
 * When each iteration of a stock MLlib {@code LogisticRegression} fit ended, which MLlib itself does not
 * report: breeze's optimizer logs one INFO line per new state ({@code Val and Grad Norm: ...}, or an
 * ERROR line when a failed iteration repeats the state), caught here on the driver as it is logged; the
 * initial point's objective is the end of the fit's first loss evaluation (the first job with a stage named after
 * MLlib's {@code RDDLossFunction}), seen by a Spark listener. The breeze lines are kept out of the
 * console. Times are seconds since construction: make one right before each fit.
 */
final class MllibProgress implements AutoCloseable {
    private static final String LOGGER = "breeze.optimize";
    private static final Pattern VALUE = Pattern.compile("Val and Grad Norm: (\\S+)");

    private final SparkContext sc;
    private final LoggerContext context;
    private final Appender appender;
    private final Listener listener = new Listener();
    private final List<Double> seconds = new ArrayList<>();
    private final Consumer<String> progress;
    private final int maxIter;
    private final long startNanos;
    private final long startMillis;

    /** Starts watching: the fit starts now; {@code progress} gets one line per iteration as it ends. */
    MllibProgress(final SparkContext sc, final int maxIter, final Consumer<String> progress) {
        this.sc = sc;
        this.maxIter = maxIter;
        this.progress = progress;
        this.startMillis = System.currentTimeMillis();
        this.startNanos = System.nanoTime();
        // The context breeze logs into (the one of Spark's classes' loader).
        this.context = (LoggerContext) LogManager.getContext(LogisticRegression.class.getClassLoader(), false);
        this.appender = new Appender();
        appender.start();
        final Configuration cfg = context.getConfiguration();
        final LoggerConfig lc = new LoggerConfig(LOGGER, Level.INFO, false);
        lc.addAppender(appender, Level.INFO, null);
        cfg.addLogger(LOGGER, lc);
        context.updateLoggers();
        sc.addSparkListener(listener);
    }

    /**
     * Seconds since construction at which each entry of the objective history was known: entry 0 (the
     * initial point) then one per iteration; NaN where it was not seen (the listener's event is waited for
     * at most a few seconds).
     */
    double[] seconds(final int historyLength) throws InterruptedException {
        final double[] out = new double[historyLength];
        Arrays.fill(out, Double.NaN);
        if (historyLength > 0 && listener.firstLoss.await(10, TimeUnit.SECONDS)) {
            out[0] = (listener.firstLossEnd - startMillis) / 1e3;
        }
        synchronized (seconds) {
            for (int i = 1; i < historyLength && i - 1 < seconds.size(); i++) {
                out[i] = seconds.get(i - 1);
            }
        }
        return out;
    }

    @Override
    public void close() {
        sc.removeSparkListener(listener);
        context.getConfiguration().removeLogger(LOGGER);
        context.updateLoggers();
        appender.stop();
    }

    private final class Appender extends AbstractAppender {
        Appender() {
            super("switchml-examples-mllib-progress", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(final LogEvent event) {
            final String msg = event.getMessage().getFormattedMessage();
            final Matcher m = VALUE.matcher(msg);
            final boolean failed = event.getLevel().isMoreSpecificThan(Level.ERROR) && msg.startsWith("Failure!");
            if (!m.find() && !failed) {
                return;
            }
            final double s = (System.nanoTime() - startNanos) / 1e9;
            final int iteration;
            synchronized (seconds) {
                seconds.add(s);
                iteration = seconds.size();
            }
            progress.accept(String.format(
                    Locale.ROOT,
                    "iteration %d/%d: loss %s, %.2f s",
                    iteration,
                    maxIter,
                    failed ? "unchanged (failed iteration, history reset)" : m.group(1),
                    s));
        }
    }

    /** The end of the first loss evaluation since construction. */
    private final class Listener extends SparkListener {
        private final Set<Integer> lossJobs = ConcurrentHashMap.newKeySet();
        private final CountDownLatch firstLoss = new CountDownLatch(1);
        private volatile long firstLossEnd;

        @Override
        public void onJobStart(final SparkListenerJobStart start) {
            final boolean loss = CollectionConverters.asJava(start.stageInfos()).stream()
                    .anyMatch(stage -> stage.name().contains("RDDLossFunction"));
            if (loss && start.time() >= startMillis) {
                lossJobs.add(start.jobId());
            }
        }

        @Override
        public void onJobEnd(final SparkListenerJobEnd end) {
            if (lossJobs.remove(end.jobId()) && firstLoss.getCount() > 0) {
                firstLossEnd = end.time();
                firstLoss.countDown();
            }
        }
    }
}

package org.switchml.spark.driver;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.messages.Rendezvous;

/**
 * Hands the progress reports of running replicated loops to their listeners, in order, on one thread of
 * its own, so that a slow listener never holds up Spark's RPC threads.
 */
final class ProgressDispatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProgressDispatch.class);

    private final Map<Long, Consumer<Rendezvous.Progress>> listeners = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(new SplittableRandom().nextLong() | 1);
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        final Thread t = new Thread(r, "switchml-progress");
        t.setDaemon(true);
        return t;
    });

    /** Registers a loop's listener; returns its id (never 0). */
    long add(final Consumer<Rendezvous.Progress> listener) {
        long id;
        do {
            id = nextId.getAndIncrement();
        } while (id == 0);
        listeners.put(id, listener);
        return id;
    }

    /** Forgets a loop's listener, after the reports already queued for it. */
    void remove(final long id) {
        try {
            thread.submit(() -> listeners.remove(id)).get(10, TimeUnit.SECONDS);
        } catch (final Exception e) {
            listeners.remove(id);
        }
    }

    /** Queues {@code report} for its listener, if it still has one. */
    void deliver(final Rendezvous.Progress report) {
        final Consumer<Rendezvous.Progress> l = listeners.get(report.listener());
        if (l != null) {
            thread.execute(() -> {
                try {
                    l.accept(report);
                } catch (final RuntimeException e) {
                    LOG.warn("spark-switchml: a progress listener failed: {}", e.toString());
                }
            });
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}

package org.switchml.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes Netty's leak detector fail tests. Netty only logs a leak (a buffer garbage-collected without
 * {@code release()}), and only when a later allocation finds its collected tracker; here every report
 * is captured, and {@link #check()} forces a collection, lets the detector see its results, and throws
 * if anything leaked. Surefire runs the tests with {@code -Dio.netty.leakDetection.level=paranoid}, so
 * every buffer is tracked. {@link NoLeaksExtension} checks after every test class.
 */
public final class LeakDetection {
    private static final List<String> LEAKS = new ArrayList<>();
    private static boolean installed;

    private LeakDetection() {}

    /** Installs the capturing listener (once per JVM). */
    public static synchronized void install() {
        if (!installed) {
            ByteBufUtil.setLeakListener((type, records) -> {
                synchronized (LEAKS) {
                    LEAKS.add(type + " leaked" + (records.isEmpty() ? " (no access records)" : ":" + records));
                }
            });
            installed = true;
        }
    }

    /** The level the tests run at; the build asks for PARANOID. */
    public static ResourceLeakDetector.Level level() {
        return ResourceLeakDetector.getLevel();
    }

    /**
     * Forces a garbage collection (waits, bounded, until a sentinel object has been collected and
     * enqueued), then allocates tracked buffers so the detector reports what that collection found.
     * Returns the reports captured since the last call, and forgets them.
     */
    public static List<String> collect() {
        install();
        // Two rounds: the reference handler enqueues what one collection cleared one by one, so a first
        // sentinel can be enqueued before a buffer's tracker cleared by the same collection; the second
        // sentinel is enqueued only after the handler has finished with the first collection's references.
        for (int round = 0; round < 2; round++) {
            final ReferenceQueue<Object> queue = new ReferenceQueue<>();
            final WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            try {
                while (queue.poll() == null && System.nanoTime() - deadline < 0) {
                    System.gc();
                    // Bounded wait for the reference handler to enqueue what this collection cleared.
                    if (queue.remove(100) != null) {
                        break;
                    }
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // A reference object that is itself unreachable is never enqueued: keep it until the wait ends.
            Reference.reachabilityFence(sentinel);
        }
        // The trackers of the collected buffers are enqueued alongside the sentinel; the detector drains its
        // queue on the next tracked allocation of each kind.
        for (int i = 0; i < 4; i++) {
            for (final ByteBuf b : new ByteBuf[] {
                PooledByteBufAllocator.DEFAULT.directBuffer(16),
                PooledByteBufAllocator.DEFAULT.heapBuffer(16),
                UnpooledByteBufAllocator.DEFAULT.directBuffer(16),
                UnpooledByteBufAllocator.DEFAULT.heapBuffer(16)
            }) {
                b.release();
            }
        }
        synchronized (LEAKS) {
            final List<String> out = List.copyOf(LEAKS);
            LEAKS.clear();
            return out;
        }
    }

    /** {@link #collect()}, failing with every report when something leaked. */
    public static void check(final String where) {
        final List<String> leaks = collect();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty buffer leak(s) found after " + where + " (leak detection "
                    + level() + "):\n" + String.join("\n----\n", leaks));
        }
    }
}

package org.switchml.examples;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/**
 * CPU time (user + system) this process spent, split by thread group: the switch's lane threads, the
 * worker sockets' event loops, the threads that call allReduce, and the rest (GC, JIT, main). Unlike
 * wall time it hardly depends on what else runs on the machine, so it shows what each part costs.
 */
final class CpuBreakdown {
    /** Thread groups, by thread-name prefix. */
    enum Group {
        LANES("switchml-lane"),
        WORKER_LOOPS("bench-worker"),
        CALLERS("bench-rank"),
        REST(null);

        final String prefix;

        Group(final String prefix) {
            this.prefix = prefix;
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS = osBean();

    private final long[] nanos = new long[Group.values().length];
    /** CPU time of the whole process, dead threads included. */
    private long process;

    private static com.sun.management.OperatingSystemMXBean osBean() {
        final java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean
                ? (com.sun.management.OperatingSystemMXBean) os
                : null;
    }

    /** Whether thread and process CPU times can be read here. */
    static boolean supported() {
        return OS != null && OS.getProcessCpuTime() >= 0 && THREADS.isThreadCpuTimeSupported();
    }

    /** CPU time used so far, by group. */
    static CpuBreakdown now() {
        final CpuBreakdown b = new CpuBreakdown();
        if (!supported()) {
            return b;
        }
        b.process = OS.getProcessCpuTime();
        final long[] ids = THREADS.getAllThreadIds();
        final ThreadInfo[] infos = THREADS.getThreadInfo(ids, 0);
        for (int i = 0; i < ids.length; i++) {
            final long t = THREADS.getThreadCpuTime(ids[i]);
            if (infos[i] == null || t < 0) {
                continue;
            }
            final Group g = groupOf(infos[i].getThreadName());
            if (g != Group.REST) {
                b.nanos[g.ordinal()] += t;
            }
        }
        return b;
    }

    private static Group groupOf(final String name) {
        for (final Group g : Group.values()) {
            if (g.prefix != null && name.startsWith(g.prefix)) {
                return g;
            }
        }
        return Group.REST;
    }

    /**
     * {@code this - earlier}, per group. The named groups' threads live through the interval; REST is the
     * process's CPU time minus theirs, so it also covers threads that started or ended meanwhile (the JIT
     * compiler's come and go).
     */
    CpuBreakdown minus(final CpuBreakdown earlier) {
        final CpuBreakdown d = new CpuBreakdown();
        d.process = process - earlier.process;
        long named = 0;
        for (final Group g : Group.values()) {
            if (g != Group.REST) {
                d.nanos[g.ordinal()] = nanos[g.ordinal()] - earlier.nanos[g.ordinal()];
                named += d.nanos[g.ordinal()];
            }
        }
        d.nanos[Group.REST.ordinal()] = Math.max(0, d.process - named);
        return d;
    }

    long nanos(final Group g) {
        return nanos[g.ordinal()];
    }

    /** CPU time of the whole process (for a difference: in the interval). */
    long total() {
        return process;
    }
}

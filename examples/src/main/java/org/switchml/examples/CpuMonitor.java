package org.switchml.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How busy the machine was with other processes while we measured: the CPU time (user + system) all
 * processes used, from {@code /proc/stat}, minus this process's own, from {@code /proc/self/stat}, as a
 * share of the machine's capacity. Kernel softirq time (loopback packet delivery) is counted as neither.
 * On systems without /proc every reading is unavailable (-1).
 */
final class CpuMonitor {
    private long busy;
    private long total;
    private long self;
    private boolean valid;

    /** Starts a measuring interval. */
    CpuMonitor start() {
        valid = read();
        return this;
    }

    /** Percent of the machine's CPU used by other processes since {@link #start()}, or -1 if unknown. */
    double otherPercent() {
        final long b0 = busy;
        final long t0 = total;
        final long s0 = self;
        if (!valid || !read() || total == t0) {
            return -1;
        }
        final long other = Math.max(0, (busy - b0) - (self - s0));
        return 100.0 * other / (total - t0);
    }

    /** Reads the counters; both files count in USER_HZ ticks. */
    private boolean read() {
        try {
            final String[] cpu = Files.readString(Path.of("/proc/stat"), StandardCharsets.US_ASCII)
                    .lines()
                    .findFirst()
                    .orElseThrow()
                    .trim()
                    .split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...
            final long user = Long.parseLong(cpu[1]);
            final long nice = Long.parseLong(cpu[2]);
            final long system = Long.parseLong(cpu[3]);
            long all = 0;
            for (int i = 1; i < Math.min(cpu.length, 9); i++) {
                all += Long.parseLong(cpu[i]);
            }
            final String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
            final String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
            self = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            busy = user + nice + system;
            total = all;
            return true;
        } catch (final IOException | RuntimeException e) {
            return false;
        }
    }
}

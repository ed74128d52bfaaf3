package org.switchml.spark.ml.classification;

import org.switchml.dataplane.JobCounters;
import org.switchml.spark.DriverRuntime;
import org.switchml.spark.EmbeddedSwitchRegistrar;
import org.switchml.spark.JobRegistrar;
import org.switchml.spark.ReplicatedLoop;

import java.util.ArrayList;
import java.util.List;

/**
 * What one fit sent through the switch: its jobs (for the counters), bytes, and fallbacks; and the only
 * place where the fit reads the switch's counters, live ({@link #embedded}) or final ({@link #traffic}).
 */
final class SwitchUse {
    private final DriverRuntime runtime;
    private final List<Integer> jobIds = new ArrayList<>();
    private double megabytes;
    private int fallbacks;

    SwitchUse(final DriverRuntime runtime) {
        this.runtime = runtime;
    }

    /** Counts a run of the loop whose vectors have {@code vectorLength} elements. */
    void ran(final ReplicatedLoop.Result r, final int vectorLength, final boolean fp64) {
        jobIds.addAll(r.jobIds());
        if (r.viaSwitch()) {
            megabytes += (double) r.iterations() * vectorLength * (fp64 ? 8 : 4) / 1e6;
        } else {
            fallbacks++; // the loop says why in its warning
        }
    }

    /** Whether every run went through the switch. */
    boolean viaSwitch() {
        return fallbacks == 0;
    }

    /** The registrar of an embedded switch, whose counters can be read live; null otherwise. */
    EmbeddedSwitchRegistrar embedded() {
        final JobRegistrar r = runtime.registrar();
        return r instanceof EmbeddedSwitchRegistrar embedded ? embedded : null;
    }

    /** Bytes, fallbacks and the switch's counters over this fit's jobs (-1s when unknown). */
    FitReport.SwitchTraffic traffic() {
        final long[] c = counters();
        return new FitReport.SwitchTraffic(megabytes, c[0], c[1], c[2], c[3], fallbacks);
    }

    /** {packets in, packets out, retransmissions, drops} over this fit's jobs; -1s when unknown. */
    private long[] counters() {
        final long[] out = new long[4];
        for (final int id : jobIds) {
            final JobCounters c = runtime.finalCounters(id);
            if (c == null) {
                // an external switch keeps its counters (or a fallback stage never reached one)
                if (runtime.registrar() instanceof EmbeddedSwitchRegistrar) {
                    continue;
                }
                return new long[] {-1, -1, -1, -1};
            }
            out[0] += c.packetsIn();
            out[1] += c.packetsOut();
            out[2] += c.retransmissions();
            for (final long d : c.drops().values()) {
                out[3] += d;
            }
        }
        return out;
    }
}

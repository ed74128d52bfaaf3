package org.switchml.spark.ml.linear;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.switchml.protocol.JobCounters;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLDriver;

/**
 * What one fit sent through the switch: its jobs (for the counters), bytes, and fallbacks; and the only
 * place where the fit reads the switch's counters, live ({@link #liveCounters}) or final ({@link #traffic}).
 */
final class SwitchUse {
    private final SwitchMLDriver driver;
    private final List<Integer> jobIds = new ArrayList<>();
    private double megabytes;
    private int fallbacks;
    private int inMemoryStages;

    SwitchUse(final SwitchMLDriver driver) {
        this.driver = driver;
    }

    /** Counts the stages of a run of the loop whose vectors have {@code vectorLength} elements. */
    void ran(final ReplicatedLoop.Result r, final int vectorLength, final boolean fp64) {
        for (final ReplicatedLoop.Stage stage : r.stages()) {
            jobIds.add(stage.jobId());
            if (stage.inMemory()) {
                inMemoryStages++;
            }
            if (!stage.viaSwitch()) {
                fallbacks++; // the loop says why in its warning
            } else if (!stage.inMemory()) { // a stage in memory sends nothing
                megabytes += (double) stage.iterations() * vectorLength * (fp64 ? 8 : 4) / 1e6;
            }
        }
    }

    /** Whether every run went through the switch. */
    boolean viaSwitch() {
        return fallbacks == 0;
    }

    /**
     * The counters of a job still on the switch; empty when the switch does not report them per job (an
     * external switch) or the job is already removed. Never throws: a busy or closing switch is empty too.
     */
    Optional<JobCounters> liveCounters(final int jobId) {
        if (jobId < 0 || !driver.countsJobs()) {
            return Optional.empty();
        }
        try {
            return driver.liveCounters(jobId);
        } catch (final RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Whether the switch reports every job's counters, so that {@link #liveCounters} can be trusted. */
    boolean countsJobs() {
        return driver.countsJobs();
    }

    /** Bytes, fallbacks and the switch's counters over this fit's jobs (-1s when unknown). */
    FitReport.SwitchTraffic traffic() {
        return counters()
                .map(c -> new FitReport.SwitchTraffic(
                        megabytes,
                        c.packetsIn(),
                        c.packetsOut(),
                        c.retransmissions(),
                        c.totalDrops(),
                        fallbacks,
                        inMemoryStages))
                .orElseGet(() -> new FitReport.SwitchTraffic(megabytes, -1, -1, -1, -1, fallbacks, inMemoryStages));
    }

    /** The switch's counters summed over this fit's jobs; empty when the switch does not report them. */
    private Optional<JobCounters> counters() {
        JobCounters sum = JobCounters.ZERO;
        for (final int id : jobIds) {
            final Optional<JobCounters> c = driver.finalCounters(id);
            if (c.isPresent()) {
                sum = sum.plus(c.get());
            } else if (!driver.countsJobs()) {
                return Optional.empty(); // an external switch keeps its counters
            }
            // else: a fallback stage never reached the switch
        }
        return Optional.of(sum);
    }
}

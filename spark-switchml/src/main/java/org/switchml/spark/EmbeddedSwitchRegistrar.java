package org.switchml.spark;

import org.switchml.dataplane.JobCounters;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;

/** Registers jobs on a software switch running in this JVM (the driver's). */
public final class EmbeddedSwitchRegistrar implements JobRegistrar {
    private final SoftwareSwitch sw;
    private final boolean owned;

    /**
     * @param sw    the switch
     * @param owned whether {@link #close()} stops it
     */
    public EmbeddedSwitchRegistrar(final SoftwareSwitch sw, final boolean owned) {
        this.sw = sw;
        this.owned = owned;
    }

    /** The switch itself (counters, for tests and diagnostics). */
    public SoftwareSwitch softwareSwitch() {
        return sw;
    }

    @Override
    public SwitchAddress address() {
        return sw.address();
    }

    @Override
    public void register(final JobSpec spec) {
        sw.registerJob(spec);
    }

    @Override
    public void remove(final int jobId) {
        sw.removeJob(jobId);
    }

    /** Counters of a job, or null. */
    public JobCounters counters(final int jobId) {
        return sw.counters(jobId);
    }

    @Override
    public void close() {
        if (owned) {
            sw.close();
        }
    }
}

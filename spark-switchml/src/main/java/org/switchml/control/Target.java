package org.switchml.control;

import org.switchml.protocol.Wire;

/** Which dataplane a controller programs; it decides what the pipeline config carries and which k is allowed. */
public enum Target {
    /**
     * BMv2 {@code simple_switch_grpc} running p4/switchml.p4: pipeline = BMv2 JSON + P4Info; k must be 64, and a
     * job has at most {@link Wire#P4_MAX_WORKERS} workers.
     */
    BMV2(Wire.P4_MAX_WORKERS),
    /**
     * The Java software switch behind a {@link org.switchml.dataplane.p4runtime.SwitchRuntimeServer}: pipeline =
     * P4Info only; any k; up to {@link Wire#MAX_WORKERS} workers per job.
     */
    SOFTWARE_SWITCH(Wire.MAX_WORKERS);

    private final int maxWorkers;

    Target(final int maxWorkers) {
        this.maxWorkers = maxWorkers;
    }

    /** Most workers one job may have on this target. */
    public int maxWorkers() {
        return maxWorkers;
    }
}

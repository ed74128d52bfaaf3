package org.switchml.control;


/** Which dataplane a controller programs; it decides what the pipeline config carries and which k is allowed. */
public enum Target {
    /** BMv2 {@code simple_switch_grpc} running p4/switchml.p4: pipeline = BMv2 JSON + P4Info; k must be 64. */
    BMV2,
    /** The Java software switch behind a {@link org.switchml.dataplane.runtime.SwitchRuntimeServer}: pipeline = P4Info only; any k. */
    SOFTWARE_SWITCH
}

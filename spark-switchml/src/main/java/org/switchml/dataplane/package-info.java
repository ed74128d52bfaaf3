/**
 * The software switch: lanes of slots that add the workers' int32 contributions and multicast each
 * completed slot, with the protocol's checks and per-job counters. Uses protocol and transport; its
 * control-plane server lives in {@code dataplane.p4runtime}.
 */
package org.switchml.dataplane;

package org.switchml.dataplane;

import java.util.Collections;
import java.util.List;
import org.switchml.transport.FaultPlan;

/**
 * How to start a {@link SoftwareSwitch}.
 *
 * @param host    address to bind (loopback by default)
 * @param ports   one UDP port per lane; 0 picks a free port
 * @param reflect when true the switch does not aggregate but echoes every contribution to its sender
 *                as a result: the "null reflector" baseline that moves the same bytes
 * @param faults  faults applied to what the switch sends
 */
public record SwitchOptions(String host, List<Integer> ports, boolean reflect, FaultPlan faults) {

    public SwitchOptions {
        ports = List.copyOf(ports);
        if (ports.isEmpty() || ports.size() > 16) {
            throw new IllegalArgumentException("a switch has 1..16 lanes, got " + ports.size());
        }
    }

    /** {@code lanes} lanes on free loopback ports, aggregating, no faults. */
    public static SwitchOptions loopback(final int lanes) {
        return new SwitchOptions("127.0.0.1", Collections.nCopies(lanes, 0), false, FaultPlan.NONE);
    }

    /** The same options with faults on the switch's sends. */
    public SwitchOptions withFaults(final FaultPlan plan) {
        return new SwitchOptions(host, ports, reflect, plan);
    }

    /** The same options in null-reflector mode. */
    public SwitchOptions reflecting() {
        return new SwitchOptions(host, ports, true, faults);
    }
}

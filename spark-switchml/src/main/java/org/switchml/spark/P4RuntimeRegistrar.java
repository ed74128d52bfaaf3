package org.switchml.spark;


import org.switchml.control.ControllerOptions;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;

import java.util.Map;

/**
 * Installs jobs through the P4Runtime controller on a switch that serves P4Runtime: a standalone
 * software switch ({@code org.switchml.control.SwitchRuntimeServer}) named by
 * {@code spark.switchml.switch.address} and {@code spark.switchml.p4runtime.address}.
 *
 * <p>BMv2 also needs each worker's MAC address and switch port, which a Spark task cannot know; drive
 * BMv2 with {@link SwitchController} and the attachments directly (docs/control-plane.md).
 */
public final class P4RuntimeRegistrar implements JobRegistrar {
    private final SwitchAddress address;
    private final SwitchController controller;

    /**
     * Connects to the P4Runtime server named by {@code spark.switchml.p4runtime.address} and pushes the
     * pipeline (P4Info only, the software switch's kind).
     */
    public P4RuntimeRegistrar(final SwitchAddress address, final Map<String, String> settings) {
        this(address, connect(SwitchMLConfig.P4RUNTIME_ADDRESS.from(settings::get)));
    }

    P4RuntimeRegistrar(final SwitchAddress address, final SwitchController controller) {
        this.address = address;
        this.controller = controller;
    }

    static SwitchController connect(final String p4runtime) {
        if (p4runtime.isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.P4RUNTIME_ADDRESS.key()
                    + " must name the switch's P4Runtime server as host:port");
        }
        final int colon = p4runtime.lastIndexOf(':');
        final SwitchController c = SwitchController.connect(ControllerOptions.of(p4runtime.substring(0, colon),
                Integer.parseInt(p4runtime.substring(colon + 1))));
        try {
            c.setPipeline(PipelineConfig.softwareSwitch());
        } catch (final RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** The controller (counters, diagnostics). */
    public SwitchController controller() {
        return controller;
    }

    @Override
    public SwitchAddress address() {
        return address;
    }

    @Override
    public JobSpec register(final JobSpec spec) {
        return controller.registerJob(spec).spec();
    }

    @Override
    public void remove(final int jobId) {
        controller.removeJob(jobId);
    }

    @Override
    public void close() {
        controller.close();
    }
}

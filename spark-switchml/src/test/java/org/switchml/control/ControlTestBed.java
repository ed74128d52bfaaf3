package org.switchml.control;

import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;

/**
 * A software switch with its P4Runtime server on 127.0.0.1:0 (real gRPC over loopback, netty-shaded) and
 * a primary controller that pushed the software-switch pipeline.
 */
final class ControlTestBed implements AutoCloseable {
    final SoftwareSwitch sw;
    final SwitchRuntimeServer server;
    final SwitchController controller;

    private ControlTestBed(
            final SoftwareSwitch sw, final SwitchRuntimeServer server, final SwitchController controller) {
        this.sw = sw;
        this.server = server;
        this.controller = controller;
    }

    static ControlTestBed start(final int lanes) {
        return start(lanes, PipelineConfig.softwareSwitch());
    }

    static ControlTestBed start(final int lanes, final PipelineConfig pipeline) {
        final SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(lanes));
        SwitchRuntimeServer server = null;
        try {
            server = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
            final SwitchController c = SwitchController.connect(ControlTestBed.optionsFor(server));
            c.setPipeline(pipeline);
            return new ControlTestBed(sw, server, c);
        } catch (final RuntimeException e) {
            if (server != null) {
                server.close();
            }
            sw.close();
            throw e;
        }
    }

    /** Another controller of the same switch, with the given election id (not yet arbitrated state checked). */
    SwitchController connect(final long electionId) {
        return SwitchController.connect(ControlTestBed.optionsFor(server).withElectionId(electionId));
    }

    @Override
    public void close() {
        controller.close();
        server.close();
        sw.close();
    }

    /** Options for a controller of {@code server} (its device id, host and port; election id 1). */
    static ControllerOptions optionsFor(final SwitchRuntimeServer server) {
        return ControllerOptions.of(server.host(), server.port()).withDeviceId(server.deviceId());
    }
}

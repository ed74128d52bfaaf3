package org.switchml.service.stack;

import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.switchml.control.ControllerOptions;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.service.JobServiceServer;
import org.switchml.service.SwitchDescription;

/**
 * A software switch and what owns it: its P4Runtime server, the controller (in process, P4Runtime primary, the
 * software switch's pipeline pushed), and the job service over that controller. Started in that order, closed in
 * the reverse one; a part that fails to start closes what started before it.
 */
public final class SwitchStack implements AutoCloseable {
    private final SoftwareSwitch sw;
    private final boolean ownsSwitch;
    private final SwitchRuntimeServer p4runtime;
    private final SwitchController controller;
    private final JobServiceServer service;

    private SwitchStack(
            final SoftwareSwitch sw,
            final boolean ownsSwitch,
            final SwitchRuntimeServer p4runtime,
            final SwitchController controller,
            final JobServiceServer service) {
        this.sw = sw;
        this.ownsSwitch = ownsSwitch;
        this.p4runtime = p4runtime;
        this.controller = controller;
        this.service = service;
    }

    /**
     * Starts the stack over {@code sw}.
     *
     * @param sw          the dataplane, started
     * @param ownsSwitch  whether closing the stack (or failing to start it) closes {@code sw}
     * @param p4runtime   starts the switch's P4Runtime server (in process, or also on a port for operators)
     * @param controller  the controller's options from the defaults for {@code sw} (its host, first lane, the
     *                    server's device id): e.g. the highest election id
     * @param mtu         the MTU of the dataplane's interface (0: unknown), which the service tells drivers
     * @param service     starts the job service over the controller and the switch's description; it owns the
     *                    controller from then on, and closes it when it cannot start
     */
    public static SwitchStack start(
            final SoftwareSwitch sw,
            final boolean ownsSwitch,
            final Function<SoftwareSwitch, SwitchRuntimeServer> p4runtime,
            final UnaryOperator<ControllerOptions> controller,
            final int mtu,
            final BiFunction<SwitchController, SwitchDescription, JobServiceServer> service) {
        SwitchRuntimeServer p4 = null;
        try {
            p4 = p4runtime.apply(sw);
            final SwitchController c = SwitchController.connectInProcess(
                    p4.inProcessName(),
                    controller.apply(ControllerOptions.of(
                                    sw.address().host(),
                                    sw.address().lanePorts().get(0))
                            .withDeviceId(p4.deviceId())));
            final SwitchDescription d;
            try {
                c.setPipeline(PipelineConfig.softwareSwitch());
                d = new SwitchDescription(
                        sw.address(), 0, mtu, true, c.poolSlots(), c.jobIndices(), c.maxWorkersPerJob());
            } catch (final RuntimeException e) {
                c.close();
                throw e;
            }
            return new SwitchStack(sw, ownsSwitch, p4, c, service.apply(c, d));
        } catch (final RuntimeException e) {
            if (p4 != null) {
                p4.close();
            }
            if (ownsSwitch) {
                sw.close();
            }
            throw e;
        }
    }

    /** The dataplane. */
    public SoftwareSwitch softwareSwitch() {
        return sw;
    }

    /** The switch's P4Runtime server. */
    public SwitchRuntimeServer p4runtime() {
        return p4runtime;
    }

    /** The controller that holds the switch's primary role (owned by the job service). */
    public SwitchController controller() {
        return controller;
    }

    /** The job service. */
    public JobServiceServer service() {
        return service;
    }

    /** Closes the job service (and its controller), the P4Runtime server, and the switch when the stack owns it. */
    @Override
    public void close() {
        service.close();
        p4runtime.close();
        if (ownsSwitch) {
            sw.close();
        }
    }
}

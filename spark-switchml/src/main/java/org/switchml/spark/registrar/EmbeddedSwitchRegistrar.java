package org.switchml.spark.registrar;

import org.switchml.spark.rpc.Endpoints;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.runtime.SwitchRuntimeServer;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;

import java.util.Optional;

/**
 * The default control plane: a software switch running in this JVM (the driver's), served over
 * P4Runtime (on loopback, and to this JVM over gRPC's in-process transport) and programmed by the same
 * {@link SwitchController} that drives a P4 target, so the embedded and the hardware paths install jobs
 * the same way.
 */
public final class EmbeddedSwitchRegistrar implements JobRegistrar {
    private final SoftwareSwitch sw;
    private final boolean owned;
    private final SwitchRuntimeServer server;
    private final P4RuntimeRegistrar viaController;

    /**
     * @param sw    the switch
     * @param owned whether {@link #close()} stops it
     */
    public EmbeddedSwitchRegistrar(final SoftwareSwitch sw, final boolean owned) {
        this.sw = sw;
        this.owned = owned;
        this.server = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
        try {
            // In process: the same P4Runtime messages as over TCP, but a job's installation costs no socket
            // round trips or thread hand-offs (it is on the stage's critical path).
            this.viaController = new P4RuntimeRegistrar(sw.address(),
                    P4RuntimeRegistrar.connectInProcess(server.inProcessName(), "127.0.0.1:" + server.port()));
        } catch (final RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** The switch itself (counters, for tests and diagnostics). */
    public SoftwareSwitch softwareSwitch() {
        return sw;
    }

    /** The controller that installs jobs on it. */
    public SwitchController controller() {
        return viaController.controller();
    }

    @Override
    public SwitchAddress address() {
        return sw.address();
    }

    @Override
    public JobSpec register(final JobSpec spec) {
        return viaController.register(spec);
    }

    @Override
    public void remove(final int jobId) {
        viaController.remove(jobId);
    }

    @Override
    public int dataplaneMtu() {
        return Endpoints.mtuOf(sw.address().host());
    }

    @Override
    public boolean countsJobs() {
        return true;
    }

    @Override
    public Optional<JobCounters> counters(final int jobId) {
        return Optional.ofNullable(sw.counters(jobId));
    }

    @Override
    public void close() {
        viaController.close();
        server.close();
        if (owned) {
            sw.close();
        }
    }
}

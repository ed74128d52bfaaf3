package org.switchml.spark.registrar;

import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.control.ControllerOptions;
import org.switchml.control.HostTable;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.control.Target;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;

import java.nio.file.Path;
import java.util.Map;

/**
 * Installs jobs through the P4Runtime controller on a switch that serves P4Runtime, named by
 * {@code spark.switchml.switch.address} and {@code spark.switchml.p4runtime.address}: a standalone software
 * switch ({@code bin/switchml-switch}) or BMv2 ({@code simple_switch_grpc}) running p4/switchml.p4.
 *
 * <p>For BMv2, {@code spark.switchml.p4.json} names the compiled program, which is pushed with the P4Info,
 * and {@code spark.switchml.p4.hosts} the switch's host table, where the controller finds each worker's switch
 * port and MAC; {@link #requiredK()} is then 64, the k the program aggregates.
 */
public final class P4RuntimeRegistrar implements JobRegistrar {
    private final SwitchAddress address;
    private final SwitchController controller;

    /**
     * Connects to the P4Runtime server named by {@code spark.switchml.p4runtime.address} and pushes the
     * pipeline: BMv2's (JSON + P4Info) when {@code spark.switchml.p4.json} is set, else the software switch's
     * (P4Info only).
     */
    public P4RuntimeRegistrar(final SwitchAddress address, final Map<String, String> settings) {
        this(address, connect(SwitchMLConfig.P4RUNTIME_ADDRESS.from(settings::get),
                SwitchMLConfig.P4_JSON.from(settings::get), SwitchMLConfig.P4_HOSTS.from(settings::get)));
    }

    P4RuntimeRegistrar(final SwitchAddress address, final SwitchController controller) {
        this.address = address;
        this.controller = controller;
    }

    /** Connects to a software switch's P4Runtime server ({@code host:port}) and pushes its pipeline. */
    static SwitchController connect(final String p4runtime) {
        return connect(p4runtime, "", "");
    }

    /**
     * Connects to {@code p4runtime} ({@code host:port}) with the host table in {@code hostsFile} (if any) and
     * pushes BMv2's pipeline from {@code bmv2Json}, or the software switch's when that is empty.
     */
    static SwitchController connect(final String p4runtime, final String bmv2Json, final String hostsFile) {
        if (p4runtime.isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.P4RUNTIME_ADDRESS.key()
                    + " must name the switch's P4Runtime server as host:port");
        }
        if (!bmv2Json.isEmpty() && hostsFile.isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.P4_JSON.key() + " is set (a BMv2 switch), so "
                    + SwitchMLConfig.P4_HOSTS.key() + " must name its host table (each worker's switch port and MAC)");
        }
        // Read before connecting: a bad file is a configuration error, not an unreachable switch.
        final HostTable hosts = hostsFile.isEmpty() ? HostTable.empty() : HostTable.read(Path.of(hostsFile));
        final PipelineConfig pipeline = bmv2Json.isEmpty() ? PipelineConfig.softwareSwitch()
                : PipelineConfig.bmv2(Path.of(bmv2Json));
        final SwitchController c = SwitchController.connect(ControllerOptions.of(p4runtime).withHosts(hosts));
        try {
            c.setPipeline(pipeline);
        } catch (final RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * Connects to a software switch's P4Runtime server in this JVM over gRPC's in-process transport
     * ({@code inProcessName}) and pushes its pipeline; {@code p4runtime} ({@code host:port}, the same server's
     * socket) names it in messages.
     */
    static SwitchController connectInProcess(final String inProcessName, final String p4runtime) {
        final SwitchController c = SwitchController.connectInProcess(inProcessName, ControllerOptions.of(p4runtime));
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
    public int requiredK() {
        return controller.target() == Target.BMV2 ? Wire.P4_K : 0;
    }

    @Override
    public boolean reachable() {
        return controller.isPrimary();
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

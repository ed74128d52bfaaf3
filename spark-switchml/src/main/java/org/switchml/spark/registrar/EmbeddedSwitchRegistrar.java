package org.switchml.spark.registrar;

import java.util.Collections;
import java.util.Optional;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceClient;
import org.switchml.service.JobServiceServer;
import org.switchml.service.Quotas;
import org.switchml.service.stack.SwitchStack;
import org.switchml.spark.messages.Endpoints;
import org.switchml.transport.FaultPlan;

/**
 * The default control plane: a software switch in this JVM (the driver's) with the same stack a shared switch
 * runs (a P4Runtime server, the controller that owns it, the job service) all on gRPC's in-process transport,
 * so nothing outside the JVM can program it and the embedded and shared paths install jobs the same way.
 */
public final class EmbeddedSwitchRegistrar implements JobRegistrar {
    private final SoftwareSwitch sw;
    private final SwitchStack stack;
    private final JobServiceRegistrar viaService;

    /**
     * @param sw    the switch
     * @param owned whether {@link #close()} stops it
     */
    public EmbeddedSwitchRegistrar(final SoftwareSwitch sw, final boolean owned) {
        this(sw, owned, JobDesk.Options.DEFAULT.admissionTimeoutMs());
    }

    /**
     * @param sw                 the switch
     * @param owned              whether {@link #close()} (or a failure here) stops it
     * @param admissionTimeoutMs how long a job waits for room when the switch is full
     */
    public EmbeddedSwitchRegistrar(final SoftwareSwitch sw, final boolean owned, final long admissionTimeoutMs) {
        this.sw = sw;
        // The driver owns this switch alone: no quota beyond what the switch holds.
        this.stack = SwitchStack.start(
                sw,
                owned,
                SwitchRuntimeServer::startInProcess,
                own -> own,
                Endpoints.mtuOf(sw.address().host()),
                (c, d) -> JobServiceServer.startInProcess(new JobDesk(
                        c,
                        d,
                        new JobDesk.Options(
                                JobDesk.Options.DEFAULT.renewIntervalMs(),
                                admissionTimeoutMs,
                                JobDesk.Options.DEFAULT.reserveAfterMs(),
                                Quotas.NONE),
                        "the embedded switch " + sw.address())));
        try {
            this.viaService = new JobServiceRegistrar(
                    JobServiceClient.inProcess(stack.service().inProcessName(), "the embedded switch's job service"),
                    "this driver",
                    sw.address(),
                    admissionTimeoutMs);
        } catch (final RuntimeException e) {
            stack.close();
            throw e;
        }
    }

    /**
     * A software switch of {@code lanes} lanes on free ports of {@code bindHost}, in this JVM, with its stack; closing
     * the registrar stops it.
     */
    public static EmbeddedSwitchRegistrar start(final String bindHost, final int lanes, final long admissionTimeoutMs) {
        return new EmbeddedSwitchRegistrar(
                SoftwareSwitch.start(new SwitchOptions(bindHost, Collections.nCopies(lanes, 0), false, FaultPlan.NONE)),
                true,
                admissionTimeoutMs);
    }

    /** The switch itself (counters, for tests and diagnostics). */
    public SoftwareSwitch softwareSwitch() {
        return sw;
    }

    /** The controller that owns it (for tests and diagnostics). */
    public SwitchController controller() {
        return stack.controller();
    }

    @Override
    public SwitchAddress address() {
        return sw.address();
    }

    @Override
    public JobIds jobIds() {
        return viaService.jobIds();
    }

    @Override
    public JobSpec register(final JobSpec spec) {
        return viaService.register(spec);
    }

    @Override
    public void remove(final int jobId) {
        viaService.remove(jobId);
    }

    @Override
    public int maxWorkers() {
        return viaService.maxWorkers();
    }

    @Override
    public int dataplaneMtu() {
        return viaService.dataplaneMtu();
    }

    @Override
    public boolean countsJobs() {
        return true;
    }

    @Override
    public Optional<JobCounters> counters(final int jobId) {
        // The switch's own counters: every drop reason, without a round trip through P4Runtime's counter cells.
        return Optional.ofNullable(sw.counters(jobId));
    }

    @Override
    public void close() {
        viaService.close();
        stack.close();
    }
}

package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Objects;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.protocol.JobSpec;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass.CapabilitiesRequest;
import p4.v1.P4RuntimeOuterClass.CapabilitiesResponse;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigResponse;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigResponse;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.WriteRequest;
import p4.v1.P4RuntimeOuterClass.WriteResponse;

/**
 * The P4Runtime service of {@link SwitchRuntimeServer}: the subset a {@code SwitchController} uses, under the
 * names of p4/switchml.p4, realised on a {@link SoftwareSwitch}. Each RPC checks the device (and, for
 * changes, the primary) and hands the request to the part that does its job: {@link Arbitration} (the
 * StreamChannel), {@link Pipelines}, {@link Writes} into the {@link ForwardingState} with
 * {@link JobAssembly} of dataplane jobs, and {@link Reads}, whose counters come from the
 * {@link CounterEmulation}.
 *
 * <p>All state is guarded by one lock: control operations are rare and short next to the dataplane, which
 * never waits for this lock.
 */
final class RuntimeService extends P4RuntimeGrpc.P4RuntimeImplBase {
    static final String API_VERSION = "1.3.0";

    private final Object lock = new Object();
    private final SoftwareSwitch sw;
    private final long deviceId;
    private final Arbitration arbitration;
    private final Pipelines pipelines;
    private final JobAssembly jobs;
    private final Writes writes;
    private final Reads reads;

    RuntimeService(final SoftwareSwitch sw, final long deviceId, final P4InfoIndex reference) {
        this.sw = sw;
        this.deviceId = deviceId;
        this.arbitration = new Arbitration(lock, deviceId);
        final ForwardingState forwarding = new ForwardingState();
        final CounterEmulation counters = new CounterEmulation(sw);
        this.jobs = new JobAssembly(sw, forwarding, counters);
        // Committing a pipeline clears the forwarding state and the counters, as loading a program does.
        this.pipelines = new Pipelines(reference, p -> {
            jobs.removeAll();
            forwarding.clear();
            counters.reset(p.index());
        });
        this.writes = new Writes(forwarding, jobs);
        this.reads = new Reads(forwarding, jobs, counters);
    }

    @Override
    public void capabilities(final CapabilitiesRequest request, final StreamObserver<CapabilitiesResponse> out) {
        out.onNext(CapabilitiesResponse.newBuilder()
                .setP4RuntimeApiVersion(API_VERSION)
                .build());
        out.onCompleted();
    }

    @Override
    public StreamObserver<StreamMessageRequest> streamChannel(final StreamObserver<StreamMessageResponse> out) {
        return arbitration.open(out);
    }

    @Override
    public void setForwardingPipelineConfig(
            final SetForwardingPipelineConfigRequest request,
            final StreamObserver<SetForwardingPipelineConfigResponse> out) {
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                arbitration.checkPrimary(
                        request.hasElectionId(), request.getElectionId(), "SetForwardingPipelineConfig");
                pipelines.apply(request);
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        out.onNext(SetForwardingPipelineConfigResponse.getDefaultInstance());
        out.onCompleted();
    }

    @Override
    public void getForwardingPipelineConfig(
            final GetForwardingPipelineConfigRequest request,
            final StreamObserver<GetForwardingPipelineConfigResponse> out) {
        final ForwardingPipelineConfig cfg;
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                cfg = pipelines.read(request.getResponseType());
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        out.onNext(
                GetForwardingPipelineConfigResponse.newBuilder().setConfig(cfg).build());
        out.onCompleted();
    }

    @Override
    public void write(final WriteRequest request, final StreamObserver<WriteResponse> out) {
        final StatusRuntimeException failedUpdates;
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                if (request.getRoleId() != 0) {
                    throw new Failure(
                            Status.Code.UNIMPLEMENTED,
                            "only the default role (0) is supported, got role " + request.getRoleId());
                }
                arbitration.checkPrimary(request.hasElectionId(), request.getElectionId(), "Write");
                failedUpdates = writes.apply(pipelines.committed().index(), request);
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        if (failedUpdates != null) {
            out.onError(failedUpdates);
            return;
        }
        out.onNext(WriteResponse.getDefaultInstance());
        out.onCompleted();
    }

    @Override
    public void read(final ReadRequest request, final StreamObserver<ReadResponse> out) {
        final ReadResponse resp;
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                resp = reads.read(pipelines.committed().index(), request);
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        out.onNext(resp);
        out.onCompleted();
    }

    private void checkDevice(final long requested) throws Failure {
        if (requested != deviceId) {
            throw new Failure(
                    Status.Code.NOT_FOUND,
                    "no device " + Long.toUnsignedString(requested) + " here: this switch is device " + deviceId);
        }
    }

    /** Ends every stream (server shutdown). */
    void closeAll() {
        arbitration.closeAll();
    }

    /** Jobs currently assembled and running on the dataplane (for tests and the main's log). */
    List<JobSpec> liveJobs() {
        synchronized (lock) {
            return jobs.live().stream().map(JobAssembly.LiveJob::spec).toList();
        }
    }

    @Override
    public String toString() {
        return "P4Runtime service of device " + deviceId + " " + Objects.toString(sw.address());
    }
}

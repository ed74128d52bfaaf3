package org.switchml.service;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import org.switchml.protocol.JobSpec;
import org.switchml.service.v1.CloseSessionRequest;
import org.switchml.service.v1.CloseSessionResponse;
import org.switchml.service.v1.CreateJobRequest;
import org.switchml.service.v1.CreateJobResponse;
import org.switchml.service.v1.DescribeSwitchRequest;
import org.switchml.service.v1.DescribeSwitchResponse;
import org.switchml.service.v1.JobServiceGrpc;
import org.switchml.service.v1.OpenSessionRequest;
import org.switchml.service.v1.OpenSessionResponse;
import org.switchml.service.v1.ReadJobCountersRequest;
import org.switchml.service.v1.ReadJobCountersResponse;
import org.switchml.service.v1.RemoveJobRequest;
import org.switchml.service.v1.RemoveJobResponse;
import org.switchml.service.v1.RenewLeaseRequest;
import org.switchml.service.v1.RenewLeaseResponse;

import java.util.function.Supplier;

/** The gRPC face of a {@link JobDesk}: unpacks requests, packs answers, passes the desk's statuses on. */
final class JobServiceEndpoint extends JobServiceGrpc.JobServiceImplBase {
    private final JobDesk desk;

    JobServiceEndpoint(final JobDesk desk) {
        this.desk = desk;
    }

    @Override
    public void openSession(final OpenSessionRequest request, final StreamObserver<OpenSessionResponse> out) {
        answer(out, () -> {
            final JobDesk.Grant g = desk.open(request.getApplication());
            return OpenSessionResponse.newBuilder().setSessionId(g.sessionId()).setLeaseMs(g.leaseMs())
                    .setRenewIntervalMs(g.renewIntervalMs()).setJobIdBase(g.jobIdBase()).setJobIdCount(g.jobIdCount())
                    .setSwitchInfo(Messages.switchInfo(g.switchDescription())).build();
        });
    }

    @Override
    public void renewLease(final RenewLeaseRequest request, final StreamObserver<RenewLeaseResponse> out) {
        answer(out, () -> {
            desk.renew(request.getSessionId());
            return RenewLeaseResponse.newBuilder().setLeaseMs(desk.options().leaseMs()).build();
        });
    }

    @Override
    public void closeSession(final CloseSessionRequest request, final StreamObserver<CloseSessionResponse> out) {
        answer(out, () -> CloseSessionResponse.newBuilder().setJobsRemoved(desk.close(request.getSessionId())).build());
    }

    @Override
    public void createJob(final CreateJobRequest request, final StreamObserver<CreateJobResponse> out) {
        answer(out, () -> {
            final long t0 = System.nanoTime();
            final JobSpec wanted;
            try {
                wanted = new JobSpec(request.getJobId(), request.getGeneration(), 0, request.getK(),
                        request.getPoolSize(), Messages.workers(request.getWorkersList()));
            } catch (final IllegalArgumentException e) {
                throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            }
            final JobSpec spec = desk.create(request.getSessionId(), wanted, request.getAdmissionTimeoutMs());
            return CreateJobResponse.newBuilder().setSpec(Messages.spec(spec))
                    .setAdmissionWaitMs((System.nanoTime() - t0) / 1_000_000).build();
        });
    }

    @Override
    public void removeJob(final RemoveJobRequest request, final StreamObserver<RemoveJobResponse> out) {
        answer(out, () -> RemoveJobResponse.newBuilder()
                .setRemoved(desk.remove(request.getSessionId(), request.getJobId())).build());
    }

    @Override
    public void readJobCounters(final ReadJobCountersRequest request, final StreamObserver<ReadJobCountersResponse> out) {
        answer(out, () -> desk.counters(request.getSessionId(), request.getJobId()).map(Messages::counters)
                .orElse(ReadJobCountersResponse.getDefaultInstance()));
    }

    @Override
    public void describeSwitch(final DescribeSwitchRequest request, final StreamObserver<DescribeSwitchResponse> out) {
        answer(out, () -> {
            final Occupancy o = desk.occupancy();
            final DescribeSwitchResponse.Builder b = DescribeSwitchResponse.newBuilder()
                    .setSwitchInfo(Messages.switchInfo(desk.description()))
                    .setSessions(o.sessions()).setJobs(o.jobs()).setSlotsHeld(o.slotsHeld())
                    .setRequestsWaiting(o.requestsWaiting()).setAdmissionsRefused(o.admissionsRefused())
                    .setLeasesExpired(o.leasesExpired());
            if (request.getIncludeTraffic()) {
                b.setTraffic(Messages.traffic(desk.totals()));
            }
            return b.build();
        });
    }

    private static <T> void answer(final StreamObserver<T> out, final Supplier<T> work) {
        final T reply;
        try {
            reply = work.get();
        } catch (final StatusRuntimeException e) {
            out.onError(e);
            return;
        } catch (final RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription(e.toString()).withCause(e).asRuntimeException());
            return;
        }
        out.onNext(reply);
        out.onCompleted();
    }
}

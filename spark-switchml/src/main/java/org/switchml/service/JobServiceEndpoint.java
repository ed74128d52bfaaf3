package org.switchml.service;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.auth.Tenants;
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

/**
 * The gRPC face of a {@link JobDesk}: unpacks requests, packs answers, and maps the desk's refusals to gRPC
 * statuses. No handler waits for the switch: what the desk does on the switch completes the call later, so the
 * server's few threads always have one free for a lease renewal. An unexpected failure is answered INTERNAL
 * with an id the server logs beside the failure, never the failure's text.
 */
final class JobServiceEndpoint extends JobServiceGrpc.JobServiceImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(JobServiceEndpoint.class);
    /** Trailer of a RESOURCE_EXHAUSTED answer: {@code quota} (refused at once) or {@code full} (waited). */
    static final Metadata.Key<String> REFUSAL = Metadata.Key.of("switchml-refusal", Metadata.ASCII_STRING_MARSHALLER);

    private static final SecureRandom IDS = new SecureRandom();

    private final JobDesk desk;

    JobServiceEndpoint(final JobDesk desk) {
        this.desk = desk;
    }

    @Override
    public void openSession(final OpenSessionRequest request, final StreamObserver<OpenSessionResponse> out) {
        answer(out, () -> {
            final JobDesk.Grant g = desk.open(request.getApplication(), Tenants.caller());
            return OpenSessionResponse.newBuilder()
                    .setSessionId(g.sessionId())
                    .setLeaseMs(g.leaseMs())
                    .setRenewIntervalMs(g.renewIntervalMs())
                    .setJobIdBase(g.jobIdBase())
                    .setJobIdCount(g.jobIdCount())
                    .setSwitchInfo(Messages.switchInfo(g.switchDescription()))
                    .setQuotas(Messages.quotas(g.quotas()))
                    .build();
        });
    }

    @Override
    public void renewLease(final RenewLeaseRequest request, final StreamObserver<RenewLeaseResponse> out) {
        answer(out, () -> {
            desk.renew(request.getSessionId());
            return RenewLeaseResponse.newBuilder()
                    .setLeaseMs(desk.options().leaseMs())
                    .build();
        });
    }

    @Override
    public void closeSession(final CloseSessionRequest request, final StreamObserver<CloseSessionResponse> out) {
        later(
                out,
                () -> desk.close(request.getSessionId()),
                n -> CloseSessionResponse.newBuilder().setJobsRemoved(n).build());
    }

    @Override
    public void createJob(final CreateJobRequest request, final StreamObserver<CreateJobResponse> out) {
        final long t0 = System.nanoTime();
        final AtomicReference<CompletableFuture<JobSpec>> asked = new AtomicReference<>();
        if (out instanceof ServerCallStreamObserver<CreateJobResponse> call) {
            // A caller that gives up (deadline, cancel) leaves the queue at once.
            call.setOnCancelHandler(() -> {
                final CompletableFuture<JobSpec> f = asked.get();
                if (f != null) {
                    desk.withdraw(f);
                }
            });
        }
        final CompletableFuture<JobSpec> pending;
        try {
            final JobSpec wanted;
            try {
                wanted = new JobSpec(
                        request.getJobId(),
                        request.getGeneration(),
                        0,
                        request.getK(),
                        request.getPoolSize(),
                        Messages.workers(request.getWorkersList()));
            } catch (final IllegalArgumentException e) {
                throw new JobDeskException(JobDeskException.Kind.INVALID, e.getMessage());
            }
            pending = desk.create(request.getSessionId(), wanted, request.getAdmissionTimeoutMs());
        } catch (final RuntimeException e) {
            out.onError(status(e));
            return;
        }
        asked.set(pending);
        if (out instanceof ServerCallStreamObserver<CreateJobResponse> call && call.isCancelled()) {
            desk.withdraw(pending); // cancelled before the handler could see the request
        }
        reply(
                out,
                pending,
                spec -> CreateJobResponse.newBuilder()
                        .setSpec(Messages.spec(spec))
                        .setAdmissionWaitMs((System.nanoTime() - t0) / 1_000_000)
                        .build());
    }

    @Override
    public void removeJob(final RemoveJobRequest request, final StreamObserver<RemoveJobResponse> out) {
        later(
                out,
                () -> desk.remove(request.getSessionId(), request.getJobId()),
                removed -> RemoveJobResponse.newBuilder().setRemoved(removed).build());
    }

    @Override
    public void readJobCounters(
            final ReadJobCountersRequest request, final StreamObserver<ReadJobCountersResponse> out) {
        later(
                out,
                () -> desk.counters(request.getSessionId(), request.getJobId()),
                c -> c.map(Messages::counters).orElse(ReadJobCountersResponse.getDefaultInstance()));
    }

    @Override
    public void describeSwitch(final DescribeSwitchRequest request, final StreamObserver<DescribeSwitchResponse> out) {
        final DescribeSwitchResponse.Builder b;
        try {
            final Occupancy o = desk.occupancy();
            b = DescribeSwitchResponse.newBuilder()
                    .setSwitchInfo(Messages.switchInfo(desk.description()))
                    .setSessions(o.sessions())
                    .setJobs(o.jobs())
                    .setSlotsHeld(o.slotsHeld())
                    .setRequestsWaiting(o.requestsWaiting())
                    .setAdmissionsRefused(o.admissionsRefused())
                    .setLeasesExpired(o.leasesExpired())
                    .setQuotaRefusals(o.quotaRefusals())
                    .setWorkersHeld(o.workersHeld())
                    .setBytesHeld(o.bytesHeld())
                    .setQuotas(Messages.quotas(desk.quotas()));
        } catch (final RuntimeException e) {
            out.onError(status(e));
            return;
        }
        if (!request.getIncludeTraffic()) {
            out.onNext(b.build());
            out.onCompleted();
            return;
        }
        later(out, desk::totals, t -> b.setTraffic(Messages.traffic(t)).build());
    }

    /** Answers with what {@code work} returns, or the status of what it throws. */
    private static <T> void answer(final StreamObserver<T> out, final Supplier<T> work) {
        final T reply;
        try {
            reply = work.get();
        } catch (final RuntimeException e) {
            out.onError(status(e));
            return;
        }
        out.onNext(reply);
        out.onCompleted();
    }

    /** Answers once {@code start}'s future completes, with {@code pack} of its value. */
    private static <T, R> void later(
            final StreamObserver<R> out, final Supplier<CompletableFuture<T>> start, final Function<T, R> pack) {
        final CompletableFuture<T> f;
        try {
            f = start.get();
        } catch (final RuntimeException e) {
            out.onError(status(e));
            return;
        }
        reply(out, f, pack);
    }

    private static <T, R> void reply(
            final StreamObserver<R> out, final CompletableFuture<T> f, final Function<T, R> pack) {
        f.whenComplete((value, failure) -> {
            if (failure != null) {
                out.onError(status(failure));
                return;
            }
            final R reply;
            try {
                reply = pack.apply(value);
            } catch (final RuntimeException e) {
                out.onError(status(e));
                return;
            }
            try {
                out.onNext(reply);
                out.onCompleted();
            } catch (final IllegalStateException | StatusRuntimeException cancelled) {
                // The caller went away first; nothing is left to answer.
            }
        });
    }

    /** The gRPC status of a failure: the desk's refusals mapped by kind, anything else INTERNAL with an id. */
    static StatusRuntimeException status(final Throwable thrown) {
        final Throwable t =
                thrown instanceof CompletionException && thrown.getCause() != null ? thrown.getCause() : thrown;
        if (t instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (t instanceof JobDeskException e) {
            final Metadata trailers = new Metadata();
            final Status s = switch (e.kind()) {
                case NO_SESSION -> Status.NOT_FOUND;
                case NOT_YOURS -> Status.PERMISSION_DENIED;
                case INVALID -> Status.INVALID_ARGUMENT;
                case OVER_QUOTA -> {
                    trailers.put(REFUSAL, "quota");
                    yield Status.RESOURCE_EXHAUSTED;
                }
                case FULL -> {
                    trailers.put(REFUSAL, "full");
                    yield Status.RESOURCE_EXHAUSTED;
                }
                case BUSY -> Status.ABORTED;
                case CANCELLED -> Status.CANCELLED;
                case SHUTTING_DOWN -> Status.UNAVAILABLE;
                case SWITCH -> switchStatus(e.switchCode());
            };
            return s.withDescription(e.getMessage()).asRuntimeException(trailers);
        }
        final String id = HexFormat.of().formatHex(randomId());
        LOG.error("job service: internal error {}", id, t);
        return Status.INTERNAL
                .withDescription("internal error " + id + " (the job service logged it under this id)")
                .asRuntimeException();
    }

    private static byte[] randomId() {
        final byte[] b = new byte[6];
        IDS.nextBytes(b);
        return b;
    }

    private static Status switchStatus(final String code) {
        try {
            return Status.fromCode(Status.Code.valueOf(code));
        } catch (final IllegalArgumentException | NullPointerException e) {
            return Status.INTERNAL;
        }
    }
}

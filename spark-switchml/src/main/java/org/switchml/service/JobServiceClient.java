package org.switchml.service;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.service.v1.CloseSessionRequest;
import org.switchml.service.v1.CreateJobRequest;
import org.switchml.service.v1.DescribeSwitchRequest;
import org.switchml.service.v1.DescribeSwitchResponse;
import org.switchml.service.v1.JobServiceGrpc;
import org.switchml.service.v1.OpenSessionRequest;
import org.switchml.service.v1.OpenSessionResponse;
import org.switchml.service.v1.ReadJobCountersRequest;
import org.switchml.service.v1.ReadJobCountersResponse;
import org.switchml.service.v1.RemoveJobRequest;
import org.switchml.service.v1.RenewLeaseRequest;
import org.switchml.service.v1.RenewLeaseResponse;

/**
 * An application's side of a job service: every call has a deadline, and a failure is a
 * {@link JobServiceException} that names the service and says why. The connection is kept alive with pings,
 * and {@link #reconnect()} moves later calls to a fresh one. Thread-safe.
 */
public final class JobServiceClient implements AutoCloseable {
    /** Deadline of every call but CreateJob, which adds its admission wait. */
    public static final long RPC_TIMEOUT_MS = 10_000;

    private final ManagedChannel channel;
    private final String what;

    private JobServiceClient(final ManagedChannel channel, final String what) {
        this.channel = channel;
        this.what = what;
    }

    /** Keepalive ping interval: gRPC's shortest, so a dead connection is noticed within 15 s even while idle. */
    static final long KEEPALIVE_MS = 10_000;

    /** A client of the job service at {@code host:port}; connects lazily (the first call says if it cannot). */
    public static JobServiceClient connect(final String host, final int port, final ChannelCredentials credentials) {
        return new JobServiceClient(
                Grpc.newChannelBuilderForAddress(host, port, credentials)
                        .keepAliveTime(KEEPALIVE_MS, TimeUnit.MILLISECONDS)
                        .keepAliveTimeout(5, TimeUnit.SECONDS)
                        .keepAliveWithoutCalls(true)
                        .build(),
                "the job service at " + host + ":" + port);
    }

    /** A client of a job service in this JVM ({@link JobServiceServer#startInProcess}). */
    public static JobServiceClient inProcess(final String name, final String what) {
        return new JobServiceClient(
                InProcessChannelBuilder.forName(name).directExecutor().build(), what);
    }

    /** What this client talks to, for messages. */
    public String what() {
        return what;
    }

    /** Opens a session for {@code application}. */
    public JobDesk.Grant open(final String application) {
        final OpenSessionResponse r = call(
                "open a session",
                () -> stub(RPC_TIMEOUT_MS)
                        .openSession(OpenSessionRequest.newBuilder()
                                .setApplication(application)
                                .build()));
        return new JobDesk.Grant(
                r.getSessionId(),
                r.getRenewIntervalMs(),
                r.getLeaseMs(),
                r.getJobIdBase(),
                r.getJobIdCount(),
                Messages.switchDescription(r.getSwitchInfo()),
                Messages.quotas(r.getQuotas()));
    }

    /** Renews the session's lease. */
    public void renew(final String sessionId) {
        call(
                "renew the lease",
                () -> stub(RPC_TIMEOUT_MS)
                        .renewLease(RenewLeaseRequest.newBuilder()
                                .setSessionId(sessionId)
                                .build()));
    }

    /**
     * Renews the session's lease without waiting: the future completes when the service answered, or fails with a
     * {@link JobServiceException} when it refused or {@code deadlineMs} passed.
     */
    public CompletableFuture<Void> renewAsync(final String sessionId, final long deadlineMs) {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        JobServiceGrpc.newStub(channel)
                .withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                .renewLease(
                        RenewLeaseRequest.newBuilder().setSessionId(sessionId).build(), new StreamObserver<>() {
                            @Override
                            public void onNext(final RenewLeaseResponse value) {
                                done.complete(null);
                            }

                            @Override
                            public void onError(final Throwable t) {
                                done.completeExceptionally(
                                        t instanceof StatusRuntimeException e ? failure("renew the lease", e) : t);
                            }

                            @Override
                            public void onCompleted() {
                                done.complete(null);
                            }
                        });
        return done;
    }

    /**
     * Sends later calls over a new connection; calls under way finish on the old one. After a call timed out,
     * this gets past a connection that stalled without breaking (keepalive would notice only after seconds).
     */
    public void reconnect() {
        channel.enterIdle();
    }

    /** Closes the session; returns how many jobs went with it. */
    public int close(final String sessionId) {
        return call(
                        "close the session",
                        () -> stub(RPC_TIMEOUT_MS)
                                .closeSession(CloseSessionRequest.newBuilder()
                                        .setSessionId(sessionId)
                                        .build()))
                .getJobsRemoved();
    }

    /**
     * Installs {@code spec} for the session, waiting at most {@code admissionTimeoutMs} (0: the service's
     * default) for room; returns the spec as installed, with its secret.
     */
    public JobSpec create(final String sessionId, final JobSpec spec, final long admissionTimeoutMs) {
        final long deadline = RPC_TIMEOUT_MS + (admissionTimeoutMs > 0 ? admissionTimeoutMs : 60_000);
        return Messages.spec(call(
                        "install job " + spec.jobName(),
                        () -> stub(deadline)
                                .createJob(CreateJobRequest.newBuilder()
                                        .setSessionId(sessionId)
                                        .setJobId(spec.jobId())
                                        .setGeneration(spec.generation())
                                        .setK(spec.k())
                                        .setPoolSize(spec.poolSize())
                                        .addAllWorkers(Messages.endpoints(spec.workers()))
                                        .setAdmissionTimeoutMs(admissionTimeoutMs)
                                        .build()))
                .getSpec());
    }

    /** Removes one of the session's jobs; returns whether the session had it. */
    public boolean remove(final String sessionId, final int jobId) {
        return call(
                        "remove job " + Integer.toUnsignedString(jobId),
                        () -> stub(RPC_TIMEOUT_MS)
                                .removeJob(RemoveJobRequest.newBuilder()
                                        .setSessionId(sessionId)
                                        .setJobId(jobId)
                                        .build()))
                .getRemoved();
    }

    /** The counters of one of the session's jobs; empty when the session has no such job. */
    public Optional<JobCounters> counters(final String sessionId, final int jobId) {
        final ReadJobCountersResponse r = call(
                "read the counters of job " + Integer.toUnsignedString(jobId),
                () -> stub(RPC_TIMEOUT_MS)
                        .readJobCounters(ReadJobCountersRequest.newBuilder()
                                .setSessionId(sessionId)
                                .setJobId(jobId)
                                .build()));
        return r.getKnown() ? Optional.of(Messages.counters(r)) : Optional.empty();
    }

    /** How full the switch is. */
    public Occupancy describe() {
        final DescribeSwitchResponse r = call(
                "describe the switch",
                () -> stub(RPC_TIMEOUT_MS).describeSwitch(DescribeSwitchRequest.getDefaultInstance()));
        return new Occupancy(
                r.getSessions(),
                r.getJobs(),
                r.getSlotsHeld(),
                r.getSwitchInfo().getPoolSlots(),
                r.getRequestsWaiting(),
                r.getAdmissionsRefused(),
                r.getLeasesExpired(),
                r.getQuotaRefusals(),
                r.getWorkersHeld(),
                r.getBytesHeld());
    }

    /** The switch's traffic, summed over every job. */
    public SwitchTotals totals() {
        return Messages.totals(call(
                        "read the switch's traffic",
                        () -> stub(RPC_TIMEOUT_MS)
                                .describeSwitch(DescribeSwitchRequest.newBuilder()
                                        .setIncludeTraffic(true)
                                        .build()))
                .getTraffic());
    }

    private JobServiceGrpc.JobServiceBlockingStub stub(final long deadlineMs) {
        return JobServiceGrpc.newBlockingStub(channel).withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
    }

    private <T> T call(final String action, final Supplier<T> rpc) {
        try {
            return rpc.get();
        } catch (final StatusRuntimeException e) {
            throw failure(action, e);
        }
    }

    /** A failed call as the driver acts on it. */
    private JobServiceException failure(final String action, final StatusRuntimeException e) {
        final Status s = e.getStatus();
        final Metadata trailers = e.getTrailers();
        final JobServiceException.Kind kind = switch (s.getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, UNKNOWN, INTERNAL -> JobServiceException.Kind.UNREACHABLE;
            case UNAUTHENTICATED, PERMISSION_DENIED ->
                s.getDescription() != null && s.getDescription().contains("bearer token")
                        ? JobServiceException.Kind.NOT_AUTHENTICATED
                        : JobServiceException.Kind.REFUSED;
            case RESOURCE_EXHAUSTED ->
                trailers != null && "quota".equals(trailers.get(JobServiceEndpoint.REFUSAL))
                        ? JobServiceException.Kind.OVER_QUOTA
                        : JobServiceException.Kind.SWITCH_FULL;
            case NOT_FOUND -> JobServiceException.Kind.SESSION_LOST;
            default -> JobServiceException.Kind.REFUSED;
        };
        final String why = s.getDescription() != null
                ? s.getDescription()
                : s.getCause() != null ? s.getCause().toString() : "no reason given";
        return new JobServiceException(kind, what + " could not " + action + ": " + s.getCode() + ": " + why, e);
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

package org.switchml.control;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.CapabilitiesRequest;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

/**
 * One controller's P4Runtime session with a switch: the gRPC channel, the StreamChannel on which it is
 * primary (kept open for the session's whole life, since a target drops a primary whose stream closed),
 * and the RPCs, each bounded by the RPC timeout. Failures become {@link SwitchControlException}s that
 * carry the switch's status and, for a Write, each failed update's error.
 */
final class P4RuntimeConnection implements AutoCloseable {
    private final ControllerOptions options;
    private final ManagedChannel channel;
    private final Uint128 electionId;
    private final ArbitrationObserver arbitration = new ArbitrationObserver();
    private final StreamObserver<StreamMessageRequest> stream;
    private volatile boolean closed;

    private P4RuntimeConnection(final ControllerOptions options, final ManagedChannel channel) {
        this.options = options;
        this.channel = channel;
        this.electionId = Uint128.newBuilder()
                .setHigh(options.electionIdHigh())
                .setLow(options.electionId())
                .build();
        this.stream = P4RuntimeGrpc.newStub(channel).streamChannel(arbitration);
    }

    /** Connects to the switch the options name (TCP, or a Unix domain socket) and becomes primary. */
    static P4RuntimeConnection open(final ControllerOptions options) {
        final ManagedChannel channel = options.unixSocket() != null
                // gRPC's "unix:" target: a P4Runtime server on a Unix domain socket (needs the epoll transport).
                ? Grpc.newChannelBuilder("unix://" + options.unixSocket(), InsecureChannelCredentials.create())
                        .build()
                : Grpc.newChannelBuilderForAddress(options.host(), options.port(), InsecureChannelCredentials.create())
                        .build();
        return open(options, channel);
    }

    /** Connects to the P4Runtime server registered in this JVM as {@code inProcessName} and becomes primary. */
    static P4RuntimeConnection openInProcess(final String inProcessName, final ControllerOptions options) {
        return open(
                options,
                InProcessChannelBuilder.forName(inProcessName).directExecutor().build());
    }

    private static P4RuntimeConnection open(final ControllerOptions options, final ManagedChannel channel) {
        final P4RuntimeConnection c = new P4RuntimeConnection(options, channel);
        try {
            c.arbitrate();
            return c;
        } catch (final RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * Opens the StreamChannel with a MasterArbitrationUpdate. Fails with the switch's status when it refuses
     * (e.g. INVALID_ARGUMENT: the election id is used by another live controller) or when another controller
     * with a higher election id is primary.
     */
    private void arbitrate() {
        stream.onNext(StreamMessageRequest.newBuilder()
                .setArbitration(MasterArbitrationUpdate.newBuilder()
                        .setDeviceId(options.deviceId())
                        .setElectionId(electionId))
                .build());
        final MasterArbitrationUpdate answer;
        try {
            answer = arbitration.first.get(options.rpcTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchControlException(Status.Code.CANCELLED, "interrupted while arbitrating with " + where());
        } catch (final TimeoutException e) {
            throw new SwitchControlException(
                    Status.Code.DEADLINE_EXCEEDED,
                    where() + " sent no arbitration answer within " + options.rpcTimeoutMs() + " ms");
        } catch (final ExecutionException e) {
            final Status s = Status.fromThrowable(e.getCause());
            if (s.getCode() == Status.Code.UNAVAILABLE) {
                // Nothing answered at all (no server, refused, unreachable): say that, not "refused arbitration".
                throw new SwitchControlException(
                        s.getCode(),
                        "P4Runtime server unreachable: " + unreachableReason(s) + " at " + options.target(),
                        List.of(),
                        e.getCause());
            }
            throw new SwitchControlException(
                    s.getCode(),
                    where() + " refused arbitration for election id " + options.electionIdText() + ": " + s.getCode()
                            + ": " + s.getDescription(),
                    List.of(),
                    e.getCause());
        }
        if (answer.getStatus().getCode() != Status.Code.OK.value()) {
            throw new SwitchControlException(
                    Status.Code.PERMISSION_DENIED,
                    "controller with election id "
                            + options.electionIdText() + " is not primary on " + where()
                            + ": the primary has election id "
                            + ArbitrationObserver.text(answer.getElectionId()) + " ("
                            + answer.getStatus().getMessage() + ")");
        }
    }

    /** "connection refused", "no route to host", ...: the innermost cause of an UNAVAILABLE status, lower-cased. */
    private static String unreachableReason(final Status s) {
        Throwable t = s.getCause();
        String msg = s.getDescription();
        while (t != null) {
            if (t.getMessage() != null) {
                msg = t.getMessage();
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        if (msg == null) {
            return "unavailable";
        }
        // Netty says "finishConnect(..) failed: Connection refused: /127.0.0.1:9559"; the address is added by
        // the caller.
        final int failed = msg.lastIndexOf("failed: ");
        if (failed >= 0) {
            msg = msg.substring(failed + "failed: ".length());
        }
        final int colon = msg.indexOf(": /");
        return (colon > 0 ? msg.substring(0, colon) : msg).toLowerCase(Locale.ROOT);
    }

    /** Whether the switch last told this controller it is primary, with the stream still open. */
    boolean isPrimary() {
        return arbitration.primary;
    }

    /** Waits, bounded, until the switch says this controller is primary again; returns whether it is. */
    boolean awaitPrimary(final long timeoutMs) throws InterruptedException {
        return arbitration.awaitPrimary(timeoutMs);
    }

    /** Refuses {@code what} unless the session is open and this controller still primary. */
    void requirePrimary(final String what) {
        if (closed) {
            throw new IllegalStateException("controller for " + where() + " is closed");
        }
        if (!arbitration.primary) {
            throw new SwitchControlException(
                    Status.Code.PERMISSION_DENIED,
                    "cannot " + what + ": controller with "
                            + "election id " + options.electionIdText() + " is no longer primary on " + where()
                            + arbitration.lost());
        }
    }

    /** The P4Runtime API version the switch implements (Capabilities RPC). */
    String apiVersion() {
        try {
            return blocking()
                    .capabilities(CapabilitiesRequest.getDefaultInstance())
                    .getP4RuntimeApiVersion();
        } catch (final StatusRuntimeException e) {
            throw failure(e, "Capabilities", List.of());
        }
    }

    /** SetForwardingPipelineConfig with {@code action}; {@code what} names it in a failure. */
    void setPipeline(
            final SetForwardingPipelineConfigRequest.Action action,
            final ForwardingPipelineConfig config,
            final String what) {
        try {
            blocking()
                    .setForwardingPipelineConfig(SetForwardingPipelineConfigRequest.newBuilder()
                            .setDeviceId(options.deviceId())
                            .setElectionId(electionId)
                            .setAction(action)
                            .setConfig(config)
                            .build());
        } catch (final StatusRuntimeException e) {
            throw failure(e, what, List.of());
        }
    }

    /** The switch's current pipeline (GetForwardingPipelineConfig, everything). */
    ForwardingPipelineConfig readPipeline() {
        try {
            return blocking()
                    .getForwardingPipelineConfig(GetForwardingPipelineConfigRequest.newBuilder()
                            .setDeviceId(options.deviceId())
                            .build())
                    .getConfig();
        } catch (final StatusRuntimeException e) {
            throw failure(e, "GetForwardingPipelineConfig", List.of());
        }
    }

    /** Sends one Write batch; {@code tolerateMissing} accepts updates that failed only with NOT_FOUND. */
    void write(final List<Update> updates, final String what, final boolean tolerateMissing) {
        if (updates.isEmpty()) {
            return;
        }
        requirePrimary(what);
        try {
            blocking()
                    .write(WriteRequest.newBuilder()
                            .setDeviceId(options.deviceId())
                            .setElectionId(electionId)
                            .addAllUpdates(updates)
                            .build());
        } catch (final StatusRuntimeException e) {
            final SwitchControlException f = failure(e, what, updates);
            if (tolerateMissing
                    && !f.updateErrors().isEmpty()
                    && f.updateErrors().stream().allMatch(u -> u.code() == Status.Code.NOT_FOUND)) {
                return;
            }
            throw f;
        }
    }

    /** One Read RPC of {@code entities}, every response of its stream. */
    List<ReadResponse> read(final List<Entity> entities, final String what) {
        final List<ReadResponse> out = new ArrayList<>();
        try {
            final Iterator<ReadResponse> it = blocking()
                    .read(ReadRequest.newBuilder()
                            .setDeviceId(options.deviceId())
                            .addAllEntities(entities)
                            .build());
            while (it.hasNext()) {
                out.add(it.next());
            }
        } catch (final StatusRuntimeException e) {
            throw failure(e, what, List.of());
        }
        return out;
    }

    private P4RuntimeGrpc.P4RuntimeBlockingStub blocking() {
        return P4RuntimeGrpc.newBlockingStub(channel).withDeadlineAfter(options.rpcTimeoutMs(), TimeUnit.MILLISECONDS);
    }

    /** A failure with the switch's status and, for a Write, each failed update's p4.v1.Error. */
    private SwitchControlException failure(
            final StatusRuntimeException e, final String what, final List<Update> updates) {
        final List<SwitchControlException.UpdateError> errors = new ArrayList<>();
        final com.google.rpc.Status detail = StatusProto.fromThrowable(e);
        if (detail != null) {
            int i = 0;
            for (final Any any : detail.getDetailsList()) {
                if (any.is(P4RuntimeOuterClass.Error.class)) {
                    try {
                        final P4RuntimeOuterClass.Error err = any.unpack(P4RuntimeOuterClass.Error.class);
                        if (err.getCanonicalCode() != Status.Code.OK.value()) {
                            errors.add(new SwitchControlException.UpdateError(
                                    i,
                                    Status.fromCodeValue(err.getCanonicalCode()).getCode(),
                                    err.getMessage()));
                        }
                    } catch (final InvalidProtocolBufferException ignored) {
                        // Not decodable: the top-level status still says what happened.
                    }
                }
                i++;
            }
        }
        final StringBuilder msg = new StringBuilder(what)
                .append(" on ")
                .append(where())
                .append(" failed: ")
                .append(e.getStatus().getCode())
                .append(": ")
                .append(e.getStatus().getDescription());
        for (final SwitchControlException.UpdateError u : errors) {
            msg.append("; update ").append(u.index());
            if (u.index() < updates.size()) {
                msg.append(" (").append(describe(updates.get(u.index()))).append(')');
            }
            msg.append(": ").append(u.code()).append(": ").append(u.message());
        }
        return new SwitchControlException(e.getStatus().getCode(), msg.toString(), errors, e);
    }

    private String describe(final Update u) {
        final Entity e = u.getEntity();
        if (e.hasTableEntry()) {
            final P4InfoIndex.Table t =
                    options.p4info().tableById(e.getTableEntry().getTableId());
            return u.getType() + " "
                    + (t == null ? "table id " + e.getTableEntry().getTableId() : t.name());
        }
        if (e.hasPacketReplicationEngineEntry()) {
            return u.getType() + " multicast group "
                    + e.getPacketReplicationEngineEntry()
                            .getMulticastGroupEntry()
                            .getMulticastGroupId();
        }
        return u.getType() + " " + e.getEntityCase();
    }

    /** "switch host:port (device d)", for messages. */
    String where() {
        return "switch " + options.target() + " (device " + options.deviceId() + ")";
    }

    /** Closes the stream (giving up primary) and the channel. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            stream.onCompleted();
        } catch (final RuntimeException ignored) {
            // The stream may already be dead; closing the channel below is what matters.
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            channel.shutdownNow();
        }
    }
}

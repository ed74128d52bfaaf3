package org.switchml.service.standalone;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.client.ClientOptions;
import org.switchml.client.SwitchMLClient;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import org.switchml.service.JobServiceClient;
import org.switchml.service.LeasedSession;
import org.switchml.testing.PrivateFiles;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass.CapabilitiesRequest;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

/**
 * The standalone switch's operator port (P4Runtime over TCP): only the operators' token opens it, the
 * applications' token does not; it is read-only, and the switch's own controller keeps primary by P4Runtime's
 * arbitration, so no second client can become primary or change the switch, and the job service goes on
 * installing jobs. With writes turned on, an operator can take primary (the control that shows the read-only
 * refusals are the port's doing).
 */
@Timeout(120)
class OperatorPortTest {
    private static final String APP_TOKEN = "applications-token-0123456789";
    private static final String OPS_TOKEN = "operators-token-0123456789";
    private static final Uint128 MAX_ID =
            Uint128.newBuilder().setHigh(-1L).setLow(-1L).build();

    @TempDir
    Path dir;

    private SwitchMain.Running start(final boolean writes) throws Exception {
        final List<String> args = new ArrayList<>(List.of(
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                PrivateFiles.write(dir.resolve("apps"), APP_TOKEN + "\n").toString(),
                "--p4runtime-port",
                "0",
                "--p4runtime-token-file",
                PrivateFiles.write(dir.resolve("ops"), OPS_TOKEN + "\n").toString()));
        if (writes) {
            args.add("--p4runtime-writes");
        }
        return SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), args.toArray(new String[0]));
    }

    private static ManagedChannel p4runtime(final SwitchMain.Running sw, final String token) {
        return Grpc.newChannelBuilderForAddress(
                        "127.0.0.1",
                        sw.p4runtime().port(),
                        token == null
                                ? InsecureChannelCredentials.create()
                                : CompositeChannelCredentials.create(
                                        InsecureChannelCredentials.create(),
                                        BearerToken.of(token).callCredentials()))
                .build();
    }

    private static P4RuntimeGrpc.P4RuntimeBlockingStub stub(final ManagedChannel ch) {
        return P4RuntimeGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static List<TableEntry> jobTable(final ManagedChannel ch) {
        final List<TableEntry> out = new ArrayList<>();
        final Iterator<ReadResponse> it = stub(ch).read(ReadRequest.newBuilder()
                .setDeviceId(0)
                .addEntities(Entity.newBuilder()
                        .setTableEntry(TableEntry.newBuilder()
                                .setTableId(P4InfoIndex.bundled()
                                        .table(P4Names.JOB_TABLE)
                                        .id())))
                .build());
        it.forEachRemaining(r -> r.getEntitiesList().forEach(e -> out.add(e.getTableEntry())));
        return out;
    }

    /** Opens a StreamChannel and arbitrates with {@code id}; completes with the switch's first answer. */
    private static CompletableFuture<MasterArbitrationUpdate> arbitrate(
            final ManagedChannel ch, final Uint128 id, final List<StreamObserver<StreamMessageRequest>> keep) {
        final CompletableFuture<MasterArbitrationUpdate> answer = new CompletableFuture<>();
        final StreamObserver<StreamMessageRequest> stream = P4RuntimeGrpc.newStub(ch)
                .streamChannel(new StreamObserver<>() {
                    @Override
                    public void onNext(final StreamMessageResponse value) {
                        if (value.hasArbitration()) {
                            answer.complete(value.getArbitration());
                        }
                    }

                    @Override
                    public void onError(final Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new IllegalStateException("stream closed"));
                    }
                });
        keep.add(stream);
        stream.onNext(StreamMessageRequest.newBuilder()
                .setArbitration(
                        MasterArbitrationUpdate.newBuilder().setDeviceId(0).setElectionId(id))
                .build());
        return answer;
    }

    private static int[] allReduceThroughTheService(final SwitchMain.Running sw, final int[] v) throws Exception {
        try (LeasedSession s = new LeasedSession(
                        JobServiceClient.connect(
                                "127.0.0.1",
                                sw.jobs().port(),
                                TlsFiles.client("", "", "", BearerToken.of(APP_TOKEN), "127.0.0.1", "the job service")),
                        "app");
                SwitchMLClient worker = SwitchMLClient.open(ClientOptions.defaults())) {
            final JobSpec spec =
                    s.create(new JobSpec(s.grant().jobIdBase(), 0, 0, 64, 8, List.of(worker.localAddress())), 0);
            return worker.join(spec, 0, sw.sw().address()).allReduce(v);
        }
    }

    @Test
    void onlyTheOperatorsTokenOpensThePortAndNoClientBecomesPrimaryOrWrites() throws Exception {
        try (SwitchMain.Running sw = start(false)) {
            final ManagedChannel apps = p4runtime(sw, APP_TOKEN);
            final ManagedChannel none = p4runtime(sw, null);
            final ManagedChannel ops = p4runtime(sw, OPS_TOKEN);
            final List<StreamObserver<StreamMessageRequest>> streams = new ArrayList<>();
            try {
                // The applications' token does not open the port: not even Capabilities, let alone a Read.
                final StatusRuntimeException appRead = assertThrows(StatusRuntimeException.class, () -> jobTable(apps));
                assertEquals(
                        Status.Code.PERMISSION_DENIED,
                        appRead.getStatus().getCode(),
                        appRead.getStatus().toString());
                assertTrue(appRead.getStatus().getDescription().contains("refused the bearer token"));
                assertEquals(
                        Status.Code.PERMISSION_DENIED,
                        assertThrows(
                                        StatusRuntimeException.class,
                                        () -> stub(apps).capabilities(CapabilitiesRequest.getDefaultInstance()))
                                .getStatus()
                                .getCode());
                assertEquals(
                        Status.Code.UNAUTHENTICATED,
                        assertThrows(
                                        StatusRuntimeException.class,
                                        () -> stub(none).capabilities(CapabilitiesRequest.getDefaultInstance()))
                                .getStatus()
                                .getCode());
                // Positive control: the operators' token reads.
                assertEquals(0, jobTable(ops).size());

                // A second client cannot take primary: the switch's controller holds the highest election id.
                final MasterArbitrationUpdate high = arbitrate(
                                ops,
                                Uint128.newBuilder().setHigh(-1L).setLow(-2L).build(),
                                streams)
                        .get(10, TimeUnit.SECONDS);
                assertEquals(
                        Status.Code.ALREADY_EXISTS.value(), high.getStatus().getCode(), high.toString());
                assertEquals(MAX_ID, high.getElectionId(), "the primary is the switch's own controller");
                final Throwable same = assertThrows(
                                Exception.class,
                                () -> arbitrate(ops, MAX_ID, streams).get(10, TimeUnit.SECONDS))
                        .getCause();
                assertEquals(
                        Status.Code.INVALID_ARGUMENT, Status.fromThrowable(same).getCode(), same.toString());
                // Nor write as the primary would: the port is read-only.
                final StatusRuntimeException write = assertThrows(
                        StatusRuntimeException.class,
                        () -> stub(ops)
                                .write(WriteRequest.newBuilder()
                                        .setDeviceId(0)
                                        .setElectionId(MAX_ID)
                                        .build()));
                assertEquals(Status.Code.PERMISSION_DENIED, write.getStatus().getCode());
                assertTrue(
                        write.getStatus().getDescription().contains("read-only"),
                        write.getStatus().getDescription());
                final StatusRuntimeException push = assertThrows(
                        StatusRuntimeException.class,
                        () -> stub(ops)
                                .setForwardingPipelineConfig(SetForwardingPipelineConfigRequest.newBuilder()
                                        .setDeviceId(0)
                                        .setElectionId(MAX_ID)
                                        .setAction(SetForwardingPipelineConfigRequest.Action.VERIFY_AND_COMMIT)
                                        .setConfig(ForwardingPipelineConfig.newBuilder()
                                                .setP4Info(P4InfoIndex.bundled().p4info()))
                                        .build()));
                assertEquals(Status.Code.PERMISSION_DENIED, push.getStatus().getCode());

                // The job service still owns the switch: a job installs and aggregates, and the operator sees it.
                assertArrayEquals(new int[] {3, -4, 5}, allReduceThroughTheService(sw, new int[] {3, -4, 5}));
            } finally {
                streams.forEach(StreamObserver::onCompleted);
                for (final ManagedChannel ch : List.of(apps, none, ops)) {
                    ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    @Test
    void withWritesOnAnOperatorMayTakePrimaryAndTheServiceHasItBackWhenItLeaves() throws Exception {
        try (SwitchMain.Running sw = start(true)) {
            final ManagedChannel ops = p4runtime(sw, OPS_TOKEN);
            final List<StreamObserver<StreamMessageRequest>> streams = new ArrayList<>();
            try {
                final MasterArbitrationUpdate mine = arbitrate(
                                ops, Uint128.newBuilder().setLow(2).build(), streams)
                        .get(10, TimeUnit.SECONDS);
                assertEquals(Status.Code.OK.value(), mine.getStatus().getCode(), mine.toString());
                stub(ops)
                        .write(WriteRequest.newBuilder()
                                .setDeviceId(0)
                                .setElectionId(Uint128.newBuilder().setLow(2))
                                .build());
            } finally {
                streams.forEach(StreamObserver::onCompleted);
                ops.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            // The operator left: the switch's controller is primary again, and jobs install.
            final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int[] sum = null;
            while (sum == null) {
                try {
                    sum = allReduceThroughTheService(sw, new int[] {7, 8});
                } catch (final RuntimeException notYet) {
                    if (System.nanoTime() > end) {
                        throw notYet;
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // bounded: the stream's close travels
                }
            }
            assertArrayEquals(new int[] {7, 8}, sum);
        }
    }
}

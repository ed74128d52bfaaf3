package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import p4.config.v1.P4InfoOuterClass.P4Info;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.CounterEntry;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.RegisterEntry;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

/**
 * Every kind of bad request gets a clear gRPC status naming the thing: as P4Runtime specifies, a batch
 * whose updates fail answers UNKNOWN with one p4.v1.Error per update; everything else answers directly.
 */
class RuntimeErrorStatusTest {
    private static ControlTestBed bed;
    private static ManagedChannel raw;

    @BeforeAll
    static void start() {
        bed = ControlTestBed.start(1);
        raw = Grpc.newChannelBuilderForAddress("127.0.0.1", bed.server.port(), InsecureChannelCredentials.create())
                .build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        raw.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        bed.close();
    }

    private static P4RuntimeGrpc.P4RuntimeBlockingStub stub() {
        return P4RuntimeGrpc.newBlockingStub(raw).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** A Write as the primary (election id 1; the server trusts the id, as P4Runtime servers do). */
    private static void write(final Update... updates) {
        stub().write(WriteRequest.newBuilder()
                .setDeviceId(0)
                .setElectionId(Uint128.newBuilder().setLow(1))
                .addAllUpdates(List.of(updates))
                .build());
    }

    private static Update insert(final TableEntry e) {
        return Update.newBuilder()
                .setType(Update.Type.INSERT)
                .setEntity(Entity.newBuilder().setTableEntry(e))
                .build();
    }

    private static StatusRuntimeException status(final Status.Code code, final Executable call) {
        final StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, e.getStatus().getCode(), e.getStatus().toString());
        return e;
    }

    /** The single p4.v1.Error of a one-update batch that failed. */
    private static P4RuntimeOuterClass.Error updateError(final Executable call) throws Exception {
        final StatusRuntimeException e = status(Status.Code.UNKNOWN, call);
        final com.google.rpc.Status detail = StatusProto.fromThrowable(e);
        final Any any = detail.getDetails(0);
        return any.unpack(P4RuntimeOuterClass.Error.class);
    }

    private static TableEntry jobEntry(final Map<String, Long> params) {
        return bed.controller.tableEntry(P4Names.JOB_TABLE, Map.of(P4Names.F_JOB_ID, 77L), P4Names.SET_JOB, params);
    }

    private static Map<String, Long> jobParams() {
        return Map.of(
                "generation",
                1L,
                "num_workers",
                1L,
                "pool_base",
                0L,
                "pool_size",
                4L,
                "mcast_grp",
                9L,
                "job_index",
                9L,
                "k",
                64L,
                "secret",
                0xCAFEF00DL);
    }

    @Test
    void unknownTableIsNotFound() throws Exception {
        final TableEntry bad =
                jobEntry(jobParams()).toBuilder().setTableId(12345).build();
        final P4RuntimeOuterClass.Error err = updateError(() -> write(insert(bad)));
        assertEquals(Status.Code.NOT_FOUND.value(), err.getCanonicalCode());
        assertTrue(err.getMessage().contains("table id 12345"), err.getMessage());
        // The controller surfaces the update's code and names the update.
        final SwitchControlException c =
                assertThrows(SwitchControlException.class, () -> bed.controller.writeUpdates(List.of(insert(bad))));
        assertEquals(Status.Code.UNKNOWN, c.code());
        assertEquals(Status.Code.NOT_FOUND, c.updateErrors().get(0).code());
        assertTrue(c.getMessage().contains("table id 12345"), c.getMessage());
        // Reads answer directly.
        final StatusRuntimeException read = status(
                Status.Code.NOT_FOUND,
                () -> stub().read(ReadRequest.newBuilder()
                                .addEntities(Entity.newBuilder()
                                        .setTableEntry(TableEntry.newBuilder().setTableId(12345)))
                                .build())
                        .hasNext());
        assertTrue(read.getStatus().getDescription().contains("table id 12345"));
        // And names unknown to the P4Info never leave the controller.
        final IllegalArgumentException name = assertThrows(
                IllegalArgumentException.class,
                () -> bed.controller.insertEntry("SwitchMLIngress.nope", Map.of(), null, Map.of()));
        assertTrue(name.getMessage().contains("SwitchMLIngress.nope"));
    }

    @Test
    void wrongFieldOrParameterWidthIsInvalidArgument() throws Exception {
        final TableEntry good = jobEntry(jobParams());
        final TableEntry wideKey = good.toBuilder()
                .setMatch(
                        0,
                        FieldMatch.newBuilder(good.getMatch(0))
                                .setExact(FieldMatch.Exact.newBuilder()
                                        .setValue(ByteString.copyFrom(new byte[] {0, 0, 0, 0, 77}))))
                .build();
        final P4RuntimeOuterClass.Error key = updateError(() -> write(insert(wideKey)));
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), key.getCanonicalCode());
        assertTrue(
                key.getMessage().contains("hdr.switchml.job_id")
                        && key.getMessage().contains("5 bytes"),
                key.getMessage());

        final P4InfoIndex.Action setJob = bed.controller.p4info().action(P4Names.SET_JOB);
        final int kIndex = setJob.params().indexOf(setJob.param("k"));
        final TableEntry.Builder wideParam = good.toBuilder();
        wideParam
                .getActionBuilder()
                .getActionBuilder()
                .getParamsBuilder(kIndex)
                .setValue(ByteString.copyFrom(new byte[] {1, 0, 0}));
        final P4RuntimeOuterClass.Error param = updateError(() -> write(insert(wideParam.build())));
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), param.getCanonicalCode());
        assertTrue(
                param.getMessage().contains("parameter k") && param.getMessage().contains("3 bytes"),
                param.getMessage());

        final TableEntry.Builder unknownAction = good.toBuilder();
        unknownAction.getActionBuilder().getActionBuilder().setActionId(999);
        final P4RuntimeOuterClass.Error action = updateError(() -> write(insert(unknownAction.build())));
        assertEquals(Status.Code.NOT_FOUND.value(), action.getCanonicalCode());
        assertTrue(action.getMessage().contains("action id 999"), action.getMessage());
    }

    @Test
    void entryConflictsAndUnsupportedEntitiesAreNamed() throws Exception {
        final TableEntry e = jobEntry(jobParams()).toBuilder()
                .setMatch(
                        0,
                        FieldMatch.newBuilder()
                                .setFieldId(1)
                                .setExact(FieldMatch.Exact.newBuilder().setValue(ByteString.copyFrom(new byte[] {78}))))
                .build();
        write(insert(e));
        try {
            final P4RuntimeOuterClass.Error dup = updateError(() -> write(insert(e)));
            assertEquals(Status.Code.ALREADY_EXISTS.value(), dup.getCanonicalCode());
            assertTrue(dup.getMessage().contains("hdr.switchml.job_id=78"), dup.getMessage());
        } finally {
            write(Update.newBuilder()
                    .setType(Update.Type.DELETE)
                    .setEntity(Entity.newBuilder().setTableEntry(e))
                    .build());
        }
        final P4RuntimeOuterClass.Error missing = updateError(() -> write(Update.newBuilder()
                .setType(Update.Type.DELETE)
                .setEntity(Entity.newBuilder().setTableEntry(e))
                .build()));
        assertEquals(Status.Code.NOT_FOUND.value(), missing.getCanonicalCode());

        status(
                Status.Code.NOT_FOUND,
                () -> stub().read(ReadRequest.newBuilder()
                                .addEntities(Entity.newBuilder()
                                        .setCounterEntry(
                                                CounterEntry.newBuilder().setCounterId(4242)))
                                .build())
                        .hasNext());
        final StatusRuntimeException reg = status(
                Status.Code.UNIMPLEMENTED,
                () -> stub().read(ReadRequest.newBuilder()
                                .addEntities(Entity.newBuilder()
                                        .setRegisterEntry(
                                                RegisterEntry.newBuilder().setRegisterId(1)))
                                .build())
                        .hasNext());
        assertTrue(reg.getStatus().getDescription().contains("register"));
        status(
                Status.Code.NOT_FOUND,
                () -> stub().read(ReadRequest.newBuilder()
                                .setDeviceId(7)
                                .addEntities(Entity.newBuilder().setTableEntry(TableEntry.getDefaultInstance()))
                                .build())
                        .hasNext());
    }

    @Test
    void writesFromAnElectionIdThatIsNotPrimaryAreDenied() {
        final StatusRuntimeException e = status(
                Status.Code.PERMISSION_DENIED,
                () -> stub().write(WriteRequest.newBuilder()
                        .setDeviceId(0)
                        .setElectionId(Uint128.newBuilder().setLow(99))
                        .addUpdates(insert(jobEntry(jobParams())))
                        .build()));
        assertTrue(
                e.getStatus().getDescription().contains("election id 99"),
                e.getStatus().getDescription());
    }

    @Test
    void aSecondPrimaryWithTheSameElectionIdIsRefusedAndALowerOneIsABackup() {
        final SwitchControlException same = assertThrows(SwitchControlException.class, () -> bed.connect(1));
        assertEquals(Status.Code.INVALID_ARGUMENT, same.code());
        assertTrue(same.getMessage().contains("already used"), same.getMessage());
        assertTrue(bed.controller.isPrimary(), "the first controller stays primary");
    }

    @Test
    void aHigherElectionIdTakesOverAndThePrimaryComesBackWhenItLeaves() throws InterruptedException {
        try (ControlTestBed own = ControlTestBed.start(1)) {
            final SwitchController first = own.controller;
            first.registerJob(new JobSpec(1, 1, 64, 4, List.of(new InetSocketAddress("127.0.0.1", 45_001))));
            final SwitchControlException lower;
            try (SwitchController second = own.connect(5)) {
                assertTrue(second.isPrimary());
                lower = assertThrows(SwitchControlException.class, () -> own.connect(3));
                assertEquals(Status.Code.PERMISSION_DENIED, lower.code());
                assertTrue(lower.getMessage().contains("election id 5"), lower.getMessage());
                // The demoted controller is refused (by the switch, or already by itself once told).
                final SwitchControlException demoted = assertThrows(
                        SwitchControlException.class,
                        () -> first.registerJob(
                                new JobSpec(2, 1, 64, 4, List.of(new InetSocketAddress("127.0.0.1", 45_002)))));
                assertEquals(Status.Code.PERMISSION_DENIED, demoted.code(), demoted.getMessage());
                assertFalse(first.isPrimary());
                second.insertEntry(
                        P4Names.JOB_TABLE,
                        Map.of(P4Names.F_JOB_ID, 3L),
                        P4Names.SET_JOB,
                        Map.of(
                                "generation",
                                1L,
                                "num_workers",
                                1L,
                                "pool_base",
                                100L,
                                "pool_size",
                                4L,
                                "mcast_grp",
                                50L,
                                "job_index",
                                50L,
                                "k",
                                64L,
                                "secret",
                                7L));
            }
            assertTrue(first.awaitPrimary(10_000), "primary again once the higher controller left");
            assertTrue(first.removeJob(1));
            first.deleteEntry(P4Names.JOB_TABLE, Map.of(P4Names.F_JOB_ID, 3L));
        }
    }

    @Test
    void noPipelineMeansFailedPreconditionAndAForeignP4InfoIsRefused() throws InterruptedException {
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer server = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
                SwitchController c = SwitchController.connect(ControlTestBed.optionsFor(server))) {
            final SwitchControlException write = assertThrows(
                    SwitchControlException.class,
                    () -> c.writeUpdates(List.of(insert(c.tableEntry(
                            P4Names.JOB_TABLE, Map.of(P4Names.F_JOB_ID, 1L), P4Names.SET_JOB, jobParams())))));
            assertEquals(Status.Code.FAILED_PRECONDITION, write.code());
            assertTrue(write.getMessage().contains("SetForwardingPipelineConfig"), write.getMessage());
            final SwitchControlException read =
                    assertThrows(SwitchControlException.class, () -> c.readCounter(P4Names.DROP_REASON));
            assertEquals(Status.Code.FAILED_PRECONDITION, read.code());
            assertThrows(
                    IllegalStateException.class,
                    () -> c.registerJob(new JobSpec(1, 1, 64, 4, List.of(new InetSocketAddress("127.0.0.1", 45_003)))));

            final P4Info.Builder other = c.p4info().p4info().toBuilder();
            other.getTablesBuilder(1).getPreambleBuilder().setName("SwitchMLIngress.sender_table");
            try (SwitchController foreign = SwitchController.connect(
                    ControlTestBed.optionsFor(server).withElectionId(2).withP4Info(new P4InfoIndex(other.build())))) {
                final SwitchControlException p4 = assertThrows(
                        SwitchControlException.class, () -> foreign.setPipeline(PipelineConfig.softwareSwitch()));
                assertEquals(Status.Code.INVALID_ARGUMENT, p4.code());
                assertTrue(p4.getMessage().contains("SwitchMLIngress.worker_table is missing"), p4.getMessage());
            }
        }
        final SwitchControlException device = assertThrows(
                SwitchControlException.class,
                () -> SwitchController.connect(
                        ControlTestBed.optionsFor(bed.server).withDeviceId(7).withElectionId(9)));
        assertEquals(Status.Code.NOT_FOUND, device.code());
        assertTrue(device.getMessage().contains("device 0"), device.getMessage());
    }
}

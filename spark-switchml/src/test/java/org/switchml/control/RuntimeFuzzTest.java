package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.Action;
import p4.v1.P4RuntimeOuterClass.CounterEntry;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.Index;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.RegisterEntry;
import p4.v1.P4RuntimeOuterClass.Replica;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

/**
 * Malformed P4Runtime requests: thousands of Write, Read, SetForwardingPipelineConfig,
 * GetForwardingPipelineConfig and StreamChannel messages, each a valid request with random mutations of its
 * protobuf fields (any depth: ids, byte strings, enums, repeated and nested messages, the P4Info itself), or
 * its serialized bytes corrupted, all sent over real gRPC. Every one gets an answer within its deadline, every
 * error status says what was wrong (an exception escaping the service would surface as UNKNOWN without a
 * description), and afterwards the server still serves its primary controller: a job registered through it
 * allreduces exactly. A random mutation may well leave a request valid, so the fuzz accepts OK answers;
 * then writes that are malformed by construction (a wrong device, role, election id or atomicity; updates
 * with an unknown table or action, a byte string wider than its field, no type, an entity the switch does
 * not write, a missing entry) must each get their own error status and leave the switch's tables and
 * multicast groups as they were.
 *
 * <p>{@code -Dswitchml.fuzz.requests=N} changes the count.
 */
class RuntimeFuzzTest {
    private static final int REQUESTS = Integer.getInteger("switchml.fuzz.requests", 2_000);
    private static final long DEADLINE_MS = 10_000;
    /** Writes that are malformed by construction, each with the status it must get. */
    private static final int MALFORMED = 300;
    /** The description gRPC gives a call whose handler threw. */
    private static final String ESCAPED = "Application error processing RPC";

    /** The request kinds fuzzed. */
    enum Rpc {
        WRITE,
        READ,
        SET_PIPELINE,
        GET_PIPELINE,
        RAW_BYTES,
        STREAM
    }

    @Test
    void malformedRequestsGetErrorStatusesAndNeverKillTheServer() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("p4runtime fuzz", 3_311));
        // gRPC logs every corrupted byte string it cannot parse at SEVERE, with a stack trace; the test checks
        // the answers instead.
        final Logger grpc = Logger.getLogger("io.grpc.internal.SerializingExecutor");
        final Level level = grpc.getLevel();
        grpc.setLevel(Level.OFF);
        try (ControlTestBed bed = ControlTestBed.start(1)) {
            final ManagedChannel raw = Grpc.newChannelBuilderForAddress(
                            "127.0.0.1", bed.server.port(), InsecureChannelCredentials.create())
                    .build();
            try {
                final Fuzz fuzz = new Fuzz(bed, raw, rnd);
                for (int i = 0; i < REQUESTS; i++) {
                    fuzz.one(i);
                }
                System.out.println("[p4runtime fuzz] " + REQUESTS + " requests; by kind " + fuzz.kinds + "; answers "
                        + fuzz.codes);
                assertTrue(fuzz.codes.size() > 3, "the fuzz produced too few kinds of answer: " + fuzz.codes);
            } finally {
                raw.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            // Still serving: capabilities, primary again, a fresh pipeline and an exact job.
            assertEquals(org.switchml.dataplane.p4runtime.SwitchRuntimeServer.API_VERSION, bed.controller.apiVersion());
            assertTrue(bed.controller.awaitPrimary(DEADLINE_MS), "the primary controller is primary again");
            bed.controller.setPipeline(PipelineConfig.softwareSwitch());
            exactAllReduce(bed);
            final ManagedChannel again = Grpc.newChannelBuilderForAddress(
                            "127.0.0.1", bed.server.port(), InsecureChannelCredentials.create())
                    .build();
            try {
                new Fuzz(bed, again, rnd).malformedWritesAreRefusedAndChangeNothing(MALFORMED);
            } finally {
                again.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } finally {
            grpc.setLevel(level);
        }
    }

    private static void exactAllReduce(final ControlTestBed bed) {
        try (SwitchMLClient a = SwitchMLClient.open(ClientOptions.defaults());
                SwitchMLClient b = SwitchMLClient.open(ClientOptions.defaults())) {
            final JobSpec spec = bed.controller
                    .registerJob(new JobSpec(5150, 1, 64, 8, List.of(a.localAddress(), b.localAddress())))
                    .spec();
            final List<JobSession> s = List.of(a.join(spec, 0, bed.sw.address()), b.join(spec, 1, bed.sw.address()));
            final List<int[]> out = TestCluster.parallel(2, r -> s.get(r).allReduce(new int[] {r + 1, 1_000, -7}));
            assertArrayEquals(new int[] {3, 2_000, -14}, out.get(0));
            assertArrayEquals(new int[] {3, 2_000, -14}, out.get(1));
        }
    }

    /** One fuzzing session against one server. */
    private static final class Fuzz {
        private final ControlTestBed bed;
        private final ManagedChannel raw;
        private final SplittableRandom rnd;
        private final List<Update> updates = new ArrayList<>();
        private final List<Entity> reads = new ArrayList<>();
        final Map<Rpc, Integer> kinds = new EnumMap<>(Rpc.class);
        final Map<String, Integer> codes = new TreeMap<>();
        /** Whether the last corrupted byte string still parsed as its request message. */
        private boolean rawParses;
        /** Valid entries of job 77 (job_table, two worker_table entries, result_table). */
        private final List<TableEntry> entries;

        Fuzz(final ControlTestBed bed, final ManagedChannel raw, final SplittableRandom rnd) {
            this.bed = bed;
            this.raw = raw;
            this.rnd = rnd;
            final SwitchController c = bed.controller;
            final Map<String, Long> job = Map.of(
                    "generation",
                    1L,
                    "num_workers",
                    2L,
                    "pool_base",
                    0L,
                    "pool_size",
                    4L,
                    "mcast_grp",
                    3L,
                    "job_index",
                    3L,
                    "k",
                    64L,
                    "secret",
                    0xABCDEFL);
            entries = List.of(
                    c.tableEntry(P4Names.JOB_TABLE, Map.of(P4Names.F_JOB_ID, 77L), P4Names.SET_JOB, job),
                    c.tableEntry(
                            P4Names.WORKER_TABLE,
                            Map.of(P4Names.F_JOB_ID, 77L, P4Names.F_SRC_ADDR, 0x7F000001L, P4Names.F_SRC_PORT, 40_000L),
                            P4Names.SET_WORKER,
                            Map.of(P4Names.P_RANK, 0L, P4Names.P_BITMAP_BIT, 1L)),
                    c.tableEntry(
                            P4Names.WORKER_TABLE,
                            Map.of(P4Names.F_JOB_ID, 77L, P4Names.F_SRC_ADDR, 0x7F000001L, P4Names.F_SRC_PORT, 40_001L),
                            P4Names.SET_WORKER,
                            Map.of(P4Names.P_RANK, 1L, P4Names.P_BITMAP_BIT, 2L)),
                    c.tableEntry(
                            P4Names.RESULT_TABLE,
                            Map.of(P4Names.F_JOB_ID, 77L, P4Names.F_EGRESS_RID, 0L),
                            P4Names.SET_RESULT_DEST,
                            Map.of(P4Names.P_DST_MAC, 1L, P4Names.P_DST_IP, 0x7F000001L, P4Names.P_DST_PORT, 40_000L)));
            for (final Update.Type type : List.of(Update.Type.INSERT, Update.Type.MODIFY, Update.Type.DELETE)) {
                for (final TableEntry e : entries) {
                    updates.add(Update.newBuilder()
                            .setType(type)
                            .setEntity(Entity.newBuilder().setTableEntry(e))
                            .build());
                }
                updates.add(Update.newBuilder()
                        .setType(type)
                        .setEntity(Entity.newBuilder()
                                .setPacketReplicationEngineEntry(PacketReplicationEngineEntry.newBuilder()
                                        .setMulticastGroupEntry(MulticastGroupEntry.newBuilder()
                                                .setMulticastGroupId(3)
                                                .addReplicas(Replica.newBuilder()
                                                        .setEgressPort(1)
                                                        .setInstance(0)))))
                        .build());
            }
            for (final org.switchml.p4info.P4InfoIndex.Counter k : c.p4info().counters()) {
                reads.add(Entity.newBuilder()
                        .setCounterEntry(CounterEntry.newBuilder().setCounterId(k.id()))
                        .build());
                for (final long at : new long[] {0, k.size() - 1, k.size()}) {
                    reads.add(Entity.newBuilder()
                            .setCounterEntry(CounterEntry.newBuilder()
                                    .setCounterId(k.id())
                                    .setIndex(Index.newBuilder().setIndex(at)))
                            .build());
                }
            }
            for (final TableEntry e : entries) {
                reads.add(Entity.newBuilder()
                        .setTableEntry(TableEntry.newBuilder().setTableId(e.getTableId()))
                        .build());
                reads.add(Entity.newBuilder().setTableEntry(e).build());
            }
            reads.add(Entity.newBuilder()
                    .setTableEntry(TableEntry.getDefaultInstance())
                    .build());
            reads.add(Entity.newBuilder()
                    .setPacketReplicationEngineEntry(PacketReplicationEngineEntry.newBuilder()
                            .setMulticastGroupEntry(MulticastGroupEntry.getDefaultInstance()))
                    .build());
            reads.add(Entity.newBuilder()
                    .setRegisterEntry(RegisterEntry.getDefaultInstance())
                    .build());
        }

        private Uint128 election() {
            return rnd.nextInt(10) < 8
                    ? Uint128.newBuilder().setLow(1).build()
                    : Uint128.newBuilder()
                            .setHigh(rnd.nextInt(2))
                            .setLow(rnd.nextLong())
                            .build();
        }

        private WriteRequest write() {
            final WriteRequest.Builder w =
                    WriteRequest.newBuilder().setDeviceId(0).setElectionId(election());
            final int n = 1 + rnd.nextInt(4);
            for (int i = 0; i < n; i++) {
                w.addUpdates(updates.get(rnd.nextInt(updates.size())));
            }
            return w.build();
        }

        private ReadRequest read() {
            final ReadRequest.Builder r = ReadRequest.newBuilder().setDeviceId(0);
            final int n = 1 + rnd.nextInt(3);
            for (int i = 0; i < n; i++) {
                r.addEntities(reads.get(rnd.nextInt(reads.size())));
            }
            return r.build();
        }

        private SetForwardingPipelineConfigRequest setPipeline() {
            // Mostly VERIFY: a commit clears the forwarding state, which is fine but makes writes shallower.
            final SetForwardingPipelineConfigRequest.Action action = rnd.nextInt(10) == 0
                    ? SetForwardingPipelineConfigRequest.Action.VERIFY_AND_COMMIT
                    : SetForwardingPipelineConfigRequest.Action.VERIFY;
            return SetForwardingPipelineConfigRequest.newBuilder()
                    .setDeviceId(0)
                    .setElectionId(election())
                    .setAction(action)
                    .setConfig(ForwardingPipelineConfig.newBuilder()
                            .setP4Info(bed.controller.p4info().p4info())
                            .setP4DeviceConfig(ByteString.copyFromUtf8("{}")))
                    .build();
        }

        void one(final int i) {
            final Rpc kind = Rpc.values()[rnd.nextInt(Rpc.values().length)];
            kinds.merge(kind, 1, Integer::sum);
            final P4RuntimeGrpc.P4RuntimeBlockingStub stub =
                    P4RuntimeGrpc.newBlockingStub(raw).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS);
            try {
                switch (kind) {
                    case WRITE -> stub.write(mutate(write(), 0));
                    case READ -> drain(stub.read(mutate(read(), 0)));
                    case SET_PIPELINE -> stub.setForwardingPipelineConfig(mutate(setPipeline(), 0));
                    case GET_PIPELINE ->
                        stub.getForwardingPipelineConfig(mutate(
                                GetForwardingPipelineConfigRequest.newBuilder()
                                        .setDeviceId(0)
                                        .build(),
                                0));
                    case RAW_BYTES -> rawBytes();
                    case STREAM -> stream();
                    default -> throw new IllegalStateException();
                }
                if (kind == Rpc.RAW_BYTES && !rawParses) {
                    fail("request " + i + ": bytes that are no " + kind + " request were answered OK");
                }
                codes.merge("OK", 1, Integer::sum);
            } catch (final StatusRuntimeException e) {
                final Status s = e.getStatus();
                codes.merge(s.getCode().toString(), 1, Integer::sum);
                if (s.getCode() == Status.Code.DEADLINE_EXCEEDED || s.getCode() == Status.Code.UNAVAILABLE) {
                    fail("request " + i + " (" + kind + ") got no answer: " + s);
                }
                if (s.getDescription() == null || s.getDescription().isBlank()) {
                    fail("request " + i + " (" + kind + ") failed without saying why: " + s);
                }
                // gRPC's answer when a handler throws; for bytes that are not a message it is gRPC's own parse
                // failure, which never reaches the service.
                if (s.getDescription().equals(ESCAPED) && !(kind == Rpc.RAW_BYTES && !rawParses)) {
                    fail("request " + i + " (" + kind + "): an exception escaped the service: " + s);
                }
                if (s.getCode() == Status.Code.UNKNOWN && kind == Rpc.WRITE) {
                    // A failed batch carries one p4.v1.Error per update, each with a message when not OK.
                    final com.google.rpc.Status detail = StatusProto.fromThrowable(e);
                    assertTrue(detail != null && detail.getDetailsCount() > 0, "batch error without details: " + s);
                }
            }
        }

        /** What the switch forwards by: every table entry and multicast group, read over P4Runtime. */
        private Set<Entity> state() {
            final ReadRequest all = ReadRequest.newBuilder()
                    .setDeviceId(0)
                    .addEntities(Entity.newBuilder().setTableEntry(TableEntry.getDefaultInstance()))
                    .addEntities(Entity.newBuilder()
                            .setPacketReplicationEngineEntry(PacketReplicationEngineEntry.newBuilder()
                                    .setMulticastGroupEntry(MulticastGroupEntry.getDefaultInstance())))
                    .build();
            final Set<Entity> out = new HashSet<>();
            P4RuntimeGrpc.newBlockingStub(raw)
                    .withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                    .read(all)
                    .forEachRemaining(r -> out.addAll(r.getEntitiesList()));
            return out;
        }

        /** An update that fails on its own, and the status the switch must give it. */
        private record Bad(String what, Update update, Status.Code code) {}

        private static Update update(final Update.Type type, final Entity.Builder e) {
            return Update.newBuilder().setType(type).setEntity(e).build();
        }

        private static Entity.Builder table(final TableEntry.Builder e) {
            return Entity.newBuilder().setTableEntry(e);
        }

        /** Each malformed or impossible update of job 77's entries, none of which the switch holds. */
        private List<Bad> badUpdates() {
            final TableEntry job = entries.get(0);
            final TableEntry worker = entries.get(1);
            final ByteString wide = ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5});
            return List.of(
                    new Bad(
                            "no update type",
                            update(Update.Type.UNSPECIFIED, table(job.toBuilder())),
                            Status.Code.INVALID_ARGUMENT),
                    new Bad(
                            "unknown table",
                            update(Update.Type.INSERT, table(job.toBuilder().setTableId(1))),
                            Status.Code.NOT_FOUND),
                    new Bad(
                            "a 5-byte job id",
                            update(
                                    Update.Type.INSERT,
                                    table(worker.toBuilder()
                                            .setMatch(
                                                    0,
                                                    worker.getMatch(0).toBuilder()
                                                            .setExact(FieldMatch.Exact.newBuilder()
                                                                    .setValue(wide))))),
                            Status.Code.INVALID_ARGUMENT),
                    new Bad(
                            "a match field the table lacks",
                            update(
                                    Update.Type.INSERT,
                                    table(worker.toBuilder()
                                            .setMatch(
                                                    0,
                                                    worker.getMatch(0).toBuilder()
                                                            .setFieldId(99)))),
                            Status.Code.INVALID_ARGUMENT),
                    new Bad(
                            "unknown action",
                            update(
                                    Update.Type.INSERT,
                                    table(job.toBuilder()
                                            .setAction(TableAction.newBuilder()
                                                    .setAction(
                                                            Action.newBuilder().setActionId(1))))),
                            Status.Code.NOT_FOUND),
                    new Bad(
                            "a 5-byte parameter",
                            update(
                                    Update.Type.INSERT,
                                    table(job.toBuilder()
                                            .setAction(job.getAction().toBuilder()
                                                    .setAction(job.getAction().getAction().toBuilder()
                                                            .setParams(
                                                                    job.getAction()
                                                                                    .getAction()
                                                                                    .getParamsCount()
                                                                            - 1,
                                                                    job
                                                                            .getAction()
                                                                            .getAction()
                                                                            .getParams(job.getAction()
                                                                                            .getAction()
                                                                                            .getParamsCount()
                                                                                    - 1)
                                                                            .toBuilder()
                                                                            .setValue(wide)))))),
                            Status.Code.INVALID_ARGUMENT),
                    new Bad(
                            "a priority on an exact table",
                            update(Update.Type.INSERT, table(job.toBuilder().setPriority(5))),
                            Status.Code.INVALID_ARGUMENT),
                    new Bad(
                            "the default action",
                            update(Update.Type.MODIFY, table(job.toBuilder().setIsDefaultAction(true))),
                            Status.Code.UNIMPLEMENTED),
                    new Bad(
                            "modify a missing entry",
                            update(Update.Type.MODIFY, table(job.toBuilder())),
                            Status.Code.NOT_FOUND),
                    new Bad(
                            "delete a missing entry",
                            update(Update.Type.DELETE, table(worker.toBuilder())),
                            Status.Code.NOT_FOUND),
                    new Bad("no entity", update(Update.Type.INSERT, Entity.newBuilder()), Status.Code.UNIMPLEMENTED),
                    new Bad(
                            "a register write",
                            update(
                                    Update.Type.MODIFY,
                                    Entity.newBuilder().setRegisterEntry(RegisterEntry.getDefaultInstance())),
                            Status.Code.UNIMPLEMENTED));
        }

        /**
         * {@code rounds} writes, each malformed in known ways: a batch of one to four bad updates (the batch
         * fails as UNKNOWN with each update's own code), or a batch of valid inserts sent with a wrong
         * device, role, election id or atomicity (refused whole). The switch's state must not move.
         */
        void malformedWritesAreRefusedAndChangeNothing(final int rounds) {
            final Set<Entity> before = state();
            assertTrue(before.size() > 0, "the switch holds the exact job's entries");
            final List<Bad> bad = badUpdates();
            final Uint128 primary = Uint128.newBuilder().setLow(1).build();
            final Map<String, Integer> seen = new TreeMap<>();
            for (int i = 0; i < rounds; i++) {
                final WriteRequest.Builder w =
                        WriteRequest.newBuilder().setDeviceId(0).setElectionId(primary);
                final List<Bad> sent = new ArrayList<>();
                final String what;
                final Status.Code expected;
                if (rnd.nextBoolean()) {
                    for (int n = 1 + rnd.nextInt(4); n > 0; n--) {
                        final Bad b = bad.get(rnd.nextInt(bad.size()));
                        sent.add(b);
                        w.addUpdates(b.update());
                    }
                    what = sent.stream().map(Bad::what).toList().toString();
                    expected = Status.Code.UNKNOWN;
                } else {
                    for (final TableEntry e : entries) {
                        w.addUpdates(update(Update.Type.INSERT, table(e.toBuilder())));
                    }
                    switch (rnd.nextInt(5)) {
                        case 0 -> {
                            w.setDeviceId(9);
                            what = "device 9";
                            expected = Status.Code.NOT_FOUND;
                        }
                        case 1 -> {
                            w.setRoleId(3);
                            what = "role 3";
                            expected = Status.Code.UNIMPLEMENTED;
                        }
                        case 2 -> {
                            w.clearElectionId();
                            what = "no election id";
                            expected = Status.Code.PERMISSION_DENIED;
                        }
                        case 3 -> {
                            w.setElectionId(Uint128.newBuilder().setLow(2 + rnd.nextInt(1_000)));
                            what = "a backup's election id";
                            expected = Status.Code.PERMISSION_DENIED;
                        }
                        default -> {
                            w.setAtomicity(WriteRequest.Atomicity.ROLLBACK_ON_ERROR);
                            what = "rollback on error";
                            expected = Status.Code.UNIMPLEMENTED;
                        }
                    }
                }
                final StatusRuntimeException e;
                try {
                    P4RuntimeGrpc.newBlockingStub(raw)
                            .withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                            .write(w.build());
                    fail("malformed write " + i + " (" + what + ") was answered OK");
                    return;
                } catch (final StatusRuntimeException x) {
                    e = x;
                }
                assertEquals(expected, e.getStatus().getCode(), "write " + i + " (" + what + "): " + e.getStatus());
                if (expected == Status.Code.UNKNOWN) {
                    final com.google.rpc.Status detail = StatusProto.fromThrowable(e);
                    assertTrue(
                            detail != null && detail.getDetailsCount() == sent.size(),
                            "write " + i + " (" + what + "): one error per update: " + detail);
                    for (int u = 0; u < sent.size(); u++) {
                        final P4RuntimeOuterClass.Error error;
                        try {
                            error = detail.getDetails(u).unpack(P4RuntimeOuterClass.Error.class);
                        } catch (final InvalidProtocolBufferException x) {
                            throw new AssertionError("write " + i + ": detail " + u + " is no p4.v1.Error", x);
                        }
                        assertEquals(
                                sent.get(u).code().value(),
                                error.getCanonicalCode(),
                                "write " + i + ", update " + u + " ("
                                        + sent.get(u).what() + "): " + error);
                        assertTrue(!error.getMessage().isBlank(), "write " + i + ", update " + u + ": no message");
                    }
                }
                assertEquals(before, state(), "write " + i + " (" + what + ") changed the switch's state");
                seen.merge(expected.toString(), 1, Integer::sum);
            }
            System.out.println("[p4runtime fuzz] " + rounds + " malformed writes refused, state unchanged; " + seen);
        }

        private static void drain(final Iterator<?> it) {
            while (it.hasNext()) {
                it.next();
            }
        }

        /** The serialized bytes of a valid Write, Read or SetForwardingPipelineConfig, corrupted. */
        private void rawBytes() {
            final int which = rnd.nextInt(3);
            final Message m = which == 0 ? write() : which == 1 ? read() : setPipeline();
            final byte[] b = m.toByteArray();
            final int flips = 1 + rnd.nextInt(8);
            for (int f = 0; f < flips && b.length > 0; f++) {
                b[rnd.nextInt(b.length)] = (byte) rnd.nextInt();
            }
            final byte[] sent = rnd.nextInt(4) == 0 ? Arrays.copyOf(b, rnd.nextInt(b.length + 1)) : b;
            try {
                m.getParserForType().parseFrom(sent);
                rawParses = true;
            } catch (final InvalidProtocolBufferException e) {
                rawParses = false;
            }
            final MethodDescriptor<?, ?> real = which == 0
                    ? P4RuntimeGrpc.getWriteMethod()
                    : which == 1 ? P4RuntimeGrpc.getReadMethod() : P4RuntimeGrpc.getSetForwardingPipelineConfigMethod();
            final MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                    .setType(real.getType())
                    .setFullMethodName(real.getFullMethodName())
                    .setRequestMarshaller(BYTES)
                    .setResponseMarshaller(BYTES)
                    .build();
            final CallOptions options = CallOptions.DEFAULT.withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS);
            if (real.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
                drain(ClientCalls.blockingServerStreamingCall(raw, method, options, sent));
            } else {
                ClientCalls.blockingUnaryCall(raw, method, options, sent);
            }
        }

        /** A StreamChannel with one mutated arbitration message, closed again: the primary must survive it. */
        private void stream() {
            final CompletableFuture<Status> end = new CompletableFuture<>();
            final StreamObserver<StreamMessageRequest> out = P4RuntimeGrpc.newStub(raw)
                    .withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                    .streamChannel(new StreamObserver<>() {
                        @Override
                        public void onNext(final StreamMessageResponse value) {
                            end.complete(Status.OK);
                        }

                        @Override
                        public void onError(final Throwable t) {
                            end.complete(Status.fromThrowable(t));
                        }

                        @Override
                        public void onCompleted() {
                            end.complete(Status.OK);
                        }
                    });
            final MasterArbitrationUpdate.Builder a = MasterArbitrationUpdate.newBuilder()
                    .setDeviceId(0)
                    .setElectionId(Uint128.newBuilder().setLow(rnd.nextInt(3) == 0 ? 0 : 2 + rnd.nextInt(50)));
            out.onNext(
                    mutate(StreamMessageRequest.newBuilder().setArbitration(a).build(), 0));
            final Status s;
            try {
                s = end.get(DEADLINE_MS, TimeUnit.MILLISECONDS);
            } catch (final Exception e) {
                throw new AssertionError("the stream got no answer", e);
            } finally {
                out.onCompleted();
            }
            if (!s.isOk()) {
                throw s.asRuntimeException();
            }
        }

        /** The message with one to three of its fields (at any depth) changed at random. */
        @SuppressWarnings("unchecked")
        private <M extends Message> M mutate(final M m, final int depth) {
            final Message.Builder b = m.toBuilder();
            final List<FieldDescriptor> fields = b.getDescriptorForType().getFields();
            if (fields.isEmpty()) {
                return m;
            }
            final int n = depth == 0 ? rnd.nextInt(4) : 1 + rnd.nextInt(2);
            for (int i = 0; i < n; i++) {
                mutateField(b, fields.get(rnd.nextInt(fields.size())), depth);
            }
            return (M) b.build();
        }

        private void mutateField(final Message.Builder b, final FieldDescriptor f, final int depth) {
            if (f.isRepeated()) {
                final int count = b.getRepeatedFieldCount(f);
                switch (rnd.nextInt(4)) {
                    case 0 -> b.clearField(f);
                    case 1 ->
                        b.addRepeatedField(
                                f, value(f, count > 0 ? b.getRepeatedField(f, rnd.nextInt(count)) : null, depth));
                    case 2 -> {
                        if (count > 0) {
                            final int at = rnd.nextInt(count);
                            b.setRepeatedField(f, at, value(f, b.getRepeatedField(f, at), depth));
                        }
                    }
                    default -> {
                        if (count > 0) {
                            b.addRepeatedField(f, b.getRepeatedField(f, rnd.nextInt(count))); // a duplicate
                        }
                    }
                }
                return;
            }
            if (rnd.nextInt(6) == 0) {
                b.clearField(f);
            } else {
                b.setField(
                        f,
                        value(
                                f,
                                b.hasField(f) || f.getJavaType() != FieldDescriptor.JavaType.MESSAGE
                                        ? b.getField(f)
                                        : null,
                                depth));
            }
        }

        private Object value(final FieldDescriptor f, final Object current, final int depth) {
            switch (f.getJavaType()) {
                case INT:
                    return switch (rnd.nextInt(4)) {
                        case 0 -> 0;
                        case 1 -> -1;
                        case 2 -> rnd.nextInt(8);
                        default -> rnd.nextInt();
                    };
                case LONG:
                    return rnd.nextBoolean() ? (long) rnd.nextInt(8) : rnd.nextLong();
                case BOOLEAN:
                    return rnd.nextBoolean();
                case FLOAT:
                    return (float) rnd.nextDouble();
                case DOUBLE:
                    return rnd.nextDouble();
                case STRING:
                    return rnd.nextBoolean() ? "" : "x" + rnd.nextInt(1_000);
                case BYTE_STRING: {
                    final byte[] bytes = new byte[rnd.nextInt(20) == 0 ? rnd.nextInt(300) : rnd.nextInt(10)];
                    for (int i = 0; i < bytes.length; i++) {
                        bytes[i] = (byte) (rnd.nextInt(3) == 0 ? 0 : rnd.nextInt());
                    }
                    return ByteString.copyFrom(bytes);
                }
                case ENUM: {
                    final List<EnumValueDescriptor> values = f.getEnumType().getValues();
                    return rnd.nextInt(8) == 0
                            ? f.getEnumType().findValueByNumberCreatingIfUnknown(100 + rnd.nextInt(50))
                            : values.get(rnd.nextInt(values.size()));
                }
                case MESSAGE: {
                    // A generated builder converts a DynamicMessage of the field's type when it is set.
                    final Message start = current instanceof Message
                            ? (Message) current
                            : com.google.protobuf.DynamicMessage.getDefaultInstance(f.getMessageType());
                    return depth >= 5 ? start : mutate(start, depth + 1);
                }
                default:
                    throw new IllegalStateException(f.getJavaType().toString());
            }
        }
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(final byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(final InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };
}

package org.switchml.dataplane.runtime;

import org.switchml.p4info.Gencode;

import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.p4info.Bytestrings;

import com.google.protobuf.Any;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import org.switchml.protocol.Wire;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.CapabilitiesRequest;
import p4.v1.P4RuntimeOuterClass.CapabilitiesResponse;
import p4.v1.P4RuntimeOuterClass.CounterData;
import p4.v1.P4RuntimeOuterClass.CounterEntry;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigResponse;
import p4.v1.P4RuntimeOuterClass.Index;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.Replica;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigResponse;
import p4.v1.P4RuntimeOuterClass.StreamError;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.StreamOtherError;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;
import p4.v1.P4RuntimeOuterClass.WriteResponse;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The P4Runtime service of {@link SwitchRuntimeServer}: the subset a {@link SwitchController} uses, under the
 * names of p4/switchml.p4, realised on a {@link SoftwareSwitch}. Table entries and multicast groups are kept
 * as written; whenever a job_table entry and all its worker_table entries exist, the job is assembled into
 * a {@link JobSpec} and registered with the dataplane. Counter reads are computed from the dataplane's
 * counters with the P4 program's meanings.
 *
 * <p>All state is guarded by one lock: control operations are rare and short next to the dataplane, which
 * never waits for this lock.
 */
final class RuntimeService extends P4RuntimeGrpc.P4RuntimeImplBase {
    static {
        Gencode.quiet(); // before any P4Runtime message class loads
    }

    static final String API_VERSION = "1.3.0";
    private static final Logger LOG = Logger.getLogger(RuntimeService.class.getName());
    /** Drop reasons kept per job: all but the first two, which are switch-wide (as in the P4 program). */
    private static final Set<DropReason> JOB_REASONS =
            EnumSet.complementOf(EnumSet.of(DropReason.MALFORMED, DropReason.UNKNOWN_JOB));

    private final Object lock = new Object();
    private final SoftwareSwitch sw;
    private final long deviceId;
    private final P4InfoIndex reference;

    private final List<Session> sessions = new ArrayList<>();
    private Pipeline committed;
    private Pipeline saved;

    /** Per table id: entries by decoded key. */
    private final Map<Integer, Map<List<Long>, Stored>> tables = new HashMap<>();
    private final TreeMap<Integer, MulticastGroupEntry> groups = new TreeMap<>();
    /** Jobs registered with the dataplane, by job id. */
    private final Map<Integer, LiveJob> live = new LinkedHashMap<>();
    /** Counter cells of removed jobs, per job index (P4 counters outlive the jobs that used them). */
    private JobCounters[] retained = new JobCounters[0];
    private SwitchCounters switchBaseline = SwitchCounters.ZERO;

    private record Pipeline(P4InfoIndex index, ForwardingPipelineConfig config) {
    }

    /** A table entry as stored: canonical message, decoded key, action name and decoded parameters. */
    private record Stored(TableEntry entry, List<Long> key, String action, Map<String, Long> params) {
    }

    private record LiveJob(JobSpec spec, int jobIndex) {
    }

    /** A request that fails with a status (thrown inside the lock, turned into the RPC's answer). */
    private static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final Status status;

        Failure(final Status.Code code, final String message) {
            super(message, null, false, false);
            this.status = Status.fromCode(code).withDescription(message);
        }
    }

    /** One StreamChannel. */
    private static final class Session {
        final StreamObserver<StreamMessageResponse> out;
        Uint128 electionId;
        boolean arbitrated;
        boolean closed;

        Session(final StreamObserver<StreamMessageResponse> out) {
            this.out = out;
        }
    }

    RuntimeService(final SoftwareSwitch sw, final long deviceId, final P4InfoIndex reference) {
        this.sw = sw;
        this.deviceId = deviceId;
        this.reference = reference;
    }

    // --------------------------------------------------------------------------------- capabilities

    @Override
    public void capabilities(final CapabilitiesRequest request, final StreamObserver<CapabilitiesResponse> out) {
        out.onNext(CapabilitiesResponse.newBuilder().setP4RuntimeApiVersion(API_VERSION).build());
        out.onCompleted();
    }

    // --------------------------------------------------------------------------------- arbitration

    @Override
    public StreamObserver<StreamMessageRequest> streamChannel(final StreamObserver<StreamMessageResponse> out) {
        final Session session = new Session(out);
        synchronized (lock) {
            sessions.add(session);
        }
        return new StreamObserver<>() {
            @Override
            public void onNext(final StreamMessageRequest value) {
                synchronized (lock) {
                    if (session.closed) {
                        return;
                    }
                    if (value.hasArbitration()) {
                        arbitrate(session, value.getArbitration());
                    } else {
                        // Packet I/O and digests: switchml.p4 has no controller packets.
                        session.out.onNext(StreamMessageResponse.newBuilder().setError(StreamError.newBuilder()
                                .setCanonicalCode(Status.Code.UNIMPLEMENTED.value())
                                .setMessage("this switch supports only arbitration on the stream, not "
                                        + value.getUpdateCase())
                                .setOther(StreamOtherError.getDefaultInstance())).build());
                    }
                }
            }

            @Override
            public void onError(final Throwable t) {
                synchronized (lock) {
                    leave(session);
                }
            }

            @Override
            public void onCompleted() {
                synchronized (lock) {
                    if (!session.closed) {
                        session.out.onCompleted();
                    }
                    leave(session);
                }
            }
        };
    }

    private void arbitrate(final Session session, final MasterArbitrationUpdate update) {
        if (update.getDeviceId() != deviceId) {
            end(session, Status.Code.NOT_FOUND, "no device " + Long.toUnsignedString(update.getDeviceId())
                    + " here: this switch is device " + deviceId);
            return;
        }
        if (update.hasRole() && (update.getRole().getId() != 0 || update.getRole().hasConfig())) {
            end(session, Status.Code.UNIMPLEMENTED, "only the default role is supported, got role id "
                    + update.getRole().getId());
            return;
        }
        final Uint128 id = update.hasElectionId() ? update.getElectionId() : null;
        if (id != null) {
            for (final Session s : sessions) {
                if (s != session && !s.closed && s.electionId != null && s.electionId.equals(id)) {
                    end(session, Status.Code.INVALID_ARGUMENT, "election id " + text(id) + " is already used by "
                            + "another controller of device " + deviceId);
                    return;
                }
            }
        }
        final Session before = primary();
        session.electionId = id;
        session.arbitrated = true;
        final Session after = primary();
        if (before != after) {
            for (final Session s : sessions) {
                if (s.arbitrated && !s.closed) {
                    tell(s, after);
                }
            }
        } else {
            tell(session, after);
        }
    }

    /** Sends {@code s} the arbitration state: OK if primary, ALREADY_EXISTS if backup, NOT_FOUND if none. */
    private void tell(final Session s, final Session primary) {
        final MasterArbitrationUpdate.Builder u = MasterArbitrationUpdate.newBuilder().setDeviceId(deviceId);
        final com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder();
        if (primary == null) {
            st.setCode(Status.Code.NOT_FOUND.value()).setMessage("no primary controller");
        } else {
            u.setElectionId(primary.electionId);
            if (s == primary) {
                st.setCode(Status.Code.OK.value()).setMessage("primary");
            } else {
                st.setCode(Status.Code.ALREADY_EXISTS.value())
                        .setMessage("backup: the primary has election id " + text(primary.electionId));
            }
        }
        s.out.onNext(StreamMessageResponse.newBuilder().setArbitration(u.setStatus(st)).build());
    }

    private void end(final Session session, final Status.Code code, final String message) {
        session.out.onError(Status.fromCode(code).withDescription(message).asRuntimeException());
        leave(session);
    }

    private void leave(final Session session) {
        if (!sessions.contains(session)) {
            return;
        }
        final Session before = primary();
        session.closed = true;
        sessions.remove(session);
        final Session after = primary();
        if (before == session) {
            for (final Session s : sessions) {
                if (s.arbitrated && !s.closed) {
                    tell(s, after);
                }
            }
        }
    }

    private Session primary() {
        Session best = null;
        for (final Session s : sessions) {
            if (!s.closed && s.electionId != null && (best == null || compare(s.electionId, best.electionId) > 0)) {
                best = s;
            }
        }
        return best;
    }

    private static int compare(final Uint128 a, final Uint128 b) {
        final int high = Long.compareUnsigned(a.getHigh(), b.getHigh());
        return high != 0 ? high : Long.compareUnsigned(a.getLow(), b.getLow());
    }

    private static String text(final Uint128 id) {
        return id.getHigh() == 0 ? Long.toUnsignedString(id.getLow())
                : Long.toUnsignedString(id.getHigh()) + ":" + Long.toUnsignedString(id.getLow());
    }

    private void checkDevice(final long requested) throws Failure {
        if (requested != deviceId) {
            throw new Failure(Status.Code.NOT_FOUND, "no device " + Long.toUnsignedString(requested)
                    + " here: this switch is device " + deviceId);
        }
    }

    private void checkPrimary(final boolean hasId, final Uint128 id, final String what) throws Failure {
        final Session p = primary();
        if (p == null) {
            throw new Failure(Status.Code.PERMISSION_DENIED, what + " refused: no primary controller (open a "
                    + "StreamChannel and send a MasterArbitrationUpdate first)");
        }
        if (!hasId || !p.electionId.equals(id)) {
            throw new Failure(Status.Code.PERMISSION_DENIED, what + " refused: election id "
                    + (hasId ? text(id) : "(none)") + " is not the primary's (" + text(p.electionId) + ")");
        }
    }

    private Pipeline pipeline() throws Failure {
        if (committed == null) {
            throw new Failure(Status.Code.FAILED_PRECONDITION, "no forwarding pipeline: send "
                    + "SetForwardingPipelineConfig first");
        }
        return committed;
    }

    // --------------------------------------------------------------------------------- pipeline

    @Override
    public void setForwardingPipelineConfig(final SetForwardingPipelineConfigRequest request,
                                            final StreamObserver<SetForwardingPipelineConfigResponse> out) {
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                checkPrimary(request.hasElectionId(), request.getElectionId(), "SetForwardingPipelineConfig");
                switch (request.getAction()) {
                    case VERIFY -> verify(request);
                    case VERIFY_AND_SAVE -> saved = verify(request);
                    case VERIFY_AND_COMMIT -> commit(verify(request));
                    case COMMIT -> {
                        if (request.hasConfig()) {
                            throw new Failure(Status.Code.INVALID_ARGUMENT, "COMMIT takes no config (it commits the "
                                    + "saved one)");
                        }
                        if (saved == null) {
                            throw new Failure(Status.Code.FAILED_PRECONDITION, "COMMIT: no config was saved");
                        }
                        commit(saved);
                        saved = null;
                    }
                    case RECONCILE_AND_COMMIT -> {
                        final Pipeline p = verify(request);
                        if (committed == null) {
                            commit(p);
                        } else if (p.index().p4info().equals(committed.index().p4info())) {
                            committed = p;   // same program: the forwarding state stays
                        } else {
                            throw new Failure(Status.Code.INVALID_ARGUMENT, "RECONCILE_AND_COMMIT: the forwarding "
                                    + "state cannot be kept across a different P4Info");
                        }
                    }
                    default -> throw new Failure(Status.Code.INVALID_ARGUMENT, "SetForwardingPipelineConfig needs an "
                            + "action, got " + request.getAction());
                }
            }
            out.onNext(SetForwardingPipelineConfigResponse.getDefaultInstance());
            out.onCompleted();
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
        }
    }

    /**
     * Accepts a config whose P4Info names what p4/switchml.p4 names (ids may differ). A BMv2 JSON in
     * p4_device_config is accepted and not used: this switch runs the same program natively.
     */
    private Pipeline verify(final SetForwardingPipelineConfigRequest request) throws Failure {
        if (!request.hasConfig() || !request.getConfig().hasP4Info()) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, request.getAction() + " needs a config with a P4Info");
        }
        final P4InfoIndex index = new P4InfoIndex(request.getConfig().getP4Info());
        final List<String> diff = reference.differencesFrom(index);
        if (!diff.isEmpty()) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "the P4Info does not match switchml.p4 (this switch runs "
                    + "only that program): " + String.join("; ", diff.subList(0, Math.min(5, diff.size())))
                    + (diff.size() > 5 ? "; and " + (diff.size() - 5) + " more" : ""));
        }
        return new Pipeline(index, request.getConfig());
    }

    /** Realises a pipeline: clears the forwarding state and the counters, as loading a program does. */
    private void commit(final Pipeline p) {
        for (final int jobId : List.copyOf(live.keySet())) {
            sw.removeJob(jobId);
        }
        live.clear();
        tables.clear();
        groups.clear();
        committed = p;
        retained = new JobCounters[(int) p.index().counter(P4Names.JOB_PACKETS_IN).size()];
        Arrays.fill(retained, JobCounters.ZERO);
        switchBaseline = sw.traffic().counters();
    }

    @Override
    public void getForwardingPipelineConfig(final GetForwardingPipelineConfigRequest request,
                                            final StreamObserver<GetForwardingPipelineConfigResponse> out) {
        final ForwardingPipelineConfig cfg;
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                cfg = pipeline().config();
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        final ForwardingPipelineConfig.Builder b = ForwardingPipelineConfig.newBuilder();
        if (cfg.hasCookie()) {
            b.setCookie(cfg.getCookie());
        }
        switch (request.getResponseType()) {
            case P4INFO_AND_COOKIE -> b.setP4Info(cfg.getP4Info());
            case DEVICE_CONFIG_AND_COOKIE -> b.setP4DeviceConfig(cfg.getP4DeviceConfig());
            case COOKIE_ONLY -> { }
            default -> b.setP4Info(cfg.getP4Info()).setP4DeviceConfig(cfg.getP4DeviceConfig());
        }
        out.onNext(GetForwardingPipelineConfigResponse.newBuilder().setConfig(b).build());
        out.onCompleted();
    }

    // --------------------------------------------------------------------------------- write

    @Override
    public void write(final WriteRequest request, final StreamObserver<WriteResponse> out) {
        final List<P4RuntimeOuterClass.Error> results = new ArrayList<>();
        boolean failed = false;
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                if (request.getRoleId() != 0) {
                    throw new Failure(Status.Code.UNIMPLEMENTED, "only the default role (0) is supported, got role "
                            + request.getRoleId());
                }
                checkPrimary(request.hasElectionId(), request.getElectionId(), "Write");
                final Pipeline p = pipeline();
                if (request.getAtomicity() != WriteRequest.Atomicity.CONTINUE_ON_ERROR) {
                    throw new Failure(Status.Code.UNIMPLEMENTED, "only CONTINUE_ON_ERROR batches are supported, got "
                            + request.getAtomicity());
                }
                final Map<Integer, Integer> touched = new LinkedHashMap<>();   // job id -> last update index
                for (int i = 0; i < request.getUpdatesCount(); i++) {
                    try {
                        apply(p.index(), request.getUpdates(i), touched, i);
                        results.add(error(Status.Code.OK, ""));
                    } catch (final Failure f) {
                        results.add(error(f.status.getCode(), f.getMessage()));
                        failed = true;
                    }
                }
                for (final Map.Entry<Integer, Integer> t : touched.entrySet()) {
                    try {
                        reconcile(p.index(), t.getKey());
                    } catch (final RuntimeException e) {
                        LOG.log(Level.WARNING, "dataplane refused job " + Integer.toUnsignedString(t.getKey()), e);
                        results.set(t.getValue(), error(Status.Code.INTERNAL, "the dataplane refused job "
                                + Integer.toUnsignedString(t.getKey()) + ": " + e.getMessage()));
                        failed = true;
                    }
                }
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        if (failed) {
            // P4Runtime: a batch with failed updates answers UNKNOWN with one p4.v1.Error per update.
            final StringBuilder summary = new StringBuilder();
            int count = 0;
            for (int i = 0; i < results.size(); i++) {
                if (results.get(i).getCanonicalCode() != Status.Code.OK.value()) {
                    count++;
                    if (summary.length() < 600) {
                        summary.append(summary.length() == 0 ? "" : "; ").append("update ").append(i).append(": ")
                                .append(Status.fromCodeValue(results.get(i).getCanonicalCode()).getCode())
                                .append(": ").append(results.get(i).getMessage());
                    }
                }
            }
            final com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder()
                    .setCode(Status.Code.UNKNOWN.value())
                    .setMessage(count + " of " + results.size() + " updates failed: " + summary);
            for (final P4RuntimeOuterClass.Error e : results) {
                st.addDetails(Any.pack(e));
            }
            out.onError(StatusProto.toStatusRuntimeException(st.build()));
            return;
        }
        out.onNext(WriteResponse.getDefaultInstance());
        out.onCompleted();
    }

    private static P4RuntimeOuterClass.Error error(final Status.Code code, final String message) {
        return P4RuntimeOuterClass.Error.newBuilder().setCanonicalCode(code.value()).setMessage(message).build();
    }

    private void apply(final P4InfoIndex p4, final Update u, final Map<Integer, Integer> touched, final int i)
            throws Failure {
        if (u.getType() == Update.Type.UNSPECIFIED || u.getType() == Update.Type.UNRECOGNIZED) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "update type must be INSERT, MODIFY or DELETE");
        }
        final Entity e = u.getEntity();
        switch (e.getEntityCase()) {
            case TABLE_ENTRY -> applyTable(p4, u.getType(), e.getTableEntry(), touched, i);
            case PACKET_REPLICATION_ENGINE_ENTRY -> applyGroup(u.getType(), e.getPacketReplicationEngineEntry());
            case REGISTER_ENTRY -> throw new Failure(Status.Code.UNIMPLEMENTED,
                    "register writes are not supported (nor on BMv2): switchml.p4 needs none");
            case COUNTER_ENTRY -> throw new Failure(Status.Code.UNIMPLEMENTED,
                    "counter writes are not supported: read a baseline and subtract it");
            default -> throw new Failure(Status.Code.UNIMPLEMENTED, "entity " + e.getEntityCase() + " is not supported");
        }
    }

    private void applyTable(final P4InfoIndex p4, final Update.Type type, final TableEntry e,
                            final Map<Integer, Integer> touched, final int i) throws Failure {
        final P4InfoIndex.Table t = table(p4, e.getTableId());
        if (e.getIsDefaultAction()) {
            throw new Failure(Status.Code.UNIMPLEMENTED, "table " + t.name() + ": the default action cannot be changed");
        }
        if (e.getPriority() != 0) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + " is exact-match: priority must be 0, "
                    + "got " + e.getPriority());
        }
        final List<Long> key = key(t, e);
        final Map<List<Long>, Stored> rows = tables.computeIfAbsent(t.id(), x -> new LinkedHashMap<>());
        final Stored old = rows.get(key);
        switch (type) {
            case INSERT -> {
                if (old != null) {
                    throw new Failure(Status.Code.ALREADY_EXISTS, "table " + t.name() + " already has an entry for "
                            + describeKey(t, key));
                }
                if (rows.size() >= t.size()) {
                    throw new Failure(Status.Code.RESOURCE_EXHAUSTED, "table " + t.name() + " is full (" + t.size()
                            + " entries)");
                }
                rows.put(key, stored(p4, t, e, key));
            }
            case MODIFY -> {
                if (old == null) {
                    throw new Failure(Status.Code.NOT_FOUND, "table " + t.name() + " has no entry for "
                            + describeKey(t, key));
                }
                rows.put(key, stored(p4, t, e, key));
            }
            default -> {
                if (old == null) {
                    throw new Failure(Status.Code.NOT_FOUND, "table " + t.name() + " has no entry for "
                            + describeKey(t, key));
                }
                rows.remove(key);
            }
        }
        if (t.name().equals(P4Names.JOB_TABLE) || t.name().equals(P4Names.WORKER_TABLE)) {
            final int jobIdField = t.fields().indexOf(t.field(P4Names.F_JOB_ID));
            touched.put((int) (long) key.get(jobIdField), i);
        }
    }

    private static P4InfoIndex.Table table(final P4InfoIndex p4, final int id) throws Failure {
        final P4InfoIndex.Table t = p4.tableById(id);
        if (t == null) {
            throw new Failure(Status.Code.NOT_FOUND, "table id " + id + " is not in the P4Info");
        }
        return t;
    }

    /** The key's values in the table's field order; every field exact, present once, within its width. */
    private static List<Long> key(final P4InfoIndex.Table t, final TableEntry e) throws Failure {
        final Long[] values = new Long[t.fields().size()];
        for (final FieldMatch m : e.getMatchList()) {
            final P4InfoIndex.Field f = t.fieldById(m.getFieldId());
            if (f == null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + " has no match field id "
                        + m.getFieldId());
            }
            final int pos = t.fields().indexOf(f);
            if (values[pos] != null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + ": match field " + f.name()
                        + " given twice");
            }
            if (!m.hasExact()) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + ": match field " + f.name()
                        + " is exact, got " + m.getFieldMatchTypeCase());
            }
            values[pos] = decode(m.getExact().getValue(), f, "table " + t.name() + " match field " + f.name());
        }
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + ": match field "
                        + t.fields().get(i).name() + " missing");
            }
        }
        return List.of(values);
    }

    private static long decode(final com.google.protobuf.ByteString bytes, final P4InfoIndex.Field f,
                               final String what) throws Failure {
        try {
            return Bytestrings.decode(bytes, f.bitwidth(), what);
        } catch (final IllegalArgumentException x) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, x.getMessage());
        }
    }

    private static String describeKey(final P4InfoIndex.Table t, final List<Long> key) {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < key.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(t.fields().get(i).name()).append('=')
                    .append(Long.toUnsignedString(key.get(i)));
        }
        return sb.toString();
    }

    /** Validates the entry's action and builds its canonical stored form. */
    private Stored stored(final P4InfoIndex p4, final P4InfoIndex.Table t, final TableEntry e, final List<Long> key)
            throws Failure {
        if (!e.hasAction() || !e.getAction().hasAction()) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "table " + t.name() + ": an entry needs a direct action");
        }
        final P4RuntimeOuterClass.Action action = e.getAction().getAction();
        final P4InfoIndex.Action a = p4.actionById(action.getActionId());
        if (a == null) {
            throw new Failure(Status.Code.NOT_FOUND, "action id " + action.getActionId() + " is not in the P4Info");
        }
        if (!t.actionIds().contains(a.id())) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "action " + a.name() + " is not an action of table "
                    + t.name());
        }
        final Map<String, Long> params = new LinkedHashMap<>();
        final Long[] values = new Long[a.params().size()];
        for (final P4RuntimeOuterClass.Action.Param p : action.getParamsList()) {
            final P4InfoIndex.Field f = a.paramById(p.getParamId());
            if (f == null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "action " + a.name() + " has no parameter id "
                        + p.getParamId());
            }
            final int pos = a.params().indexOf(f);
            if (values[pos] != null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "action " + a.name() + ": parameter " + f.name()
                        + " given twice");
            }
            values[pos] = decode(p.getValue(), f, "action " + a.name() + " parameter " + f.name());
        }
        final P4RuntimeOuterClass.Action.Builder canon = P4RuntimeOuterClass.Action.newBuilder()
                .setActionId(a.id());
        for (int i = 0; i < values.length; i++) {
            final P4InfoIndex.Field f = a.params().get(i);
            if (values[i] == null) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "action " + a.name() + ": parameter " + f.name()
                        + " missing");
            }
            params.put(f.name(), values[i]);
            canon.addParams(P4RuntimeOuterClass.Action.Param.newBuilder().setParamId(f.id())
                    .setValue(Bytestrings.encode(values[i], f.bitwidth(), f.name())));
        }
        if (a.name().equals(P4Names.SET_JOB)) {
            checkJob(p4, t, key, params);
        }
        final TableEntry.Builder entry = TableEntry.newBuilder().setTableId(t.id());
        for (int i = 0; i < key.size(); i++) {
            final P4InfoIndex.Field f = t.fields().get(i);
            entry.addMatch(FieldMatch.newBuilder().setFieldId(f.id()).setExact(FieldMatch.Exact.newBuilder()
                    .setValue(Bytestrings.encode(key.get(i), f.bitwidth(), f.name()))));
        }
        entry.setAction(TableAction.newBuilder().setAction(canon));
        return new Stored(entry.build(), key, a.name(), params);
    }

    /** set_job values this dataplane can run; the P4 switch would accept them and misbehave instead. */
    private static void checkJob(final P4InfoIndex p4, final P4InfoIndex.Table t, final List<Long> key,
                                 final Map<String, Long> p) throws Failure {
        final String job = "job " + key.get(0);
        final long n = p.get(P4Names.P_NUM_WORKERS);
        final long k = p.get(P4Names.P_K);
        final long pool = p.get(P4Names.P_POOL_SIZE);
        final long index = p.get(P4Names.P_JOB_INDEX);
        final long jobs = p4.counter(P4Names.JOB_PACKETS_IN).size();
        if (n < 1 || n > Wire.MAX_WORKERS) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, job + ": num_workers must be 1.." + Wire.MAX_WORKERS
                    + ", got " + n);
        }
        if (k < 1 || k > Wire.MAX_K) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, job + ": k must be 1.." + Wire.MAX_K + ", got " + k);
        }
        if (pool < 1) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, job + ": pool_size must be >= 1");
        }
        if (index >= jobs) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, job + ": job_index " + index + " outside 0.." + (jobs - 1));
        }
    }

    private void applyGroup(final Update.Type type, final PacketReplicationEngineEntry pre) throws Failure {
        if (!pre.hasMulticastGroupEntry()) {
            throw new Failure(Status.Code.UNIMPLEMENTED, "only multicast groups are supported, got " + pre.getTypeCase());
        }
        final MulticastGroupEntry g = pre.getMulticastGroupEntry();
        final int id = g.getMulticastGroupId();
        if (id == 0) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "multicast group id 0 is not valid");
        }
        final Set<String> seen = new LinkedHashSet<>();
        for (final Replica r : g.getReplicasList()) {
            if (!seen.add(r.getEgressPort() + "/" + r.getInstance())) {
                throw new Failure(Status.Code.INVALID_ARGUMENT, "multicast group " + id + ": replica (port "
                        + r.getEgressPort() + ", instance " + r.getInstance() + ") given twice");
            }
        }
        final boolean exists = groups.containsKey(id);
        switch (type) {
            case INSERT -> {
                if (exists) {
                    throw new Failure(Status.Code.ALREADY_EXISTS, "multicast group " + id + " already exists");
                }
                groups.put(id, g);
            }
            case MODIFY -> {
                if (!exists) {
                    throw new Failure(Status.Code.NOT_FOUND, "multicast group " + id + " does not exist");
                }
                groups.put(id, g);
            }
            default -> {
                if (!exists) {
                    throw new Failure(Status.Code.NOT_FOUND, "multicast group " + id + " does not exist");
                }
                groups.remove(id);
            }
        }
    }

    /**
     * Brings the dataplane in line with the tables for one job: registered when its job_table entry (with
     * set_job) and one worker_table entry per rank 0..n-1 exist, removed otherwise. Results go to the
     * workers' endpoints; result_table and the multicast group are kept for reads only (the software
     * switch sends each result to the endpoints it knows from the worker entries).
     */
    private void reconcile(final P4InfoIndex p4, final int jobId) {
        final JobSpec desired;
        final int index;
        final Stored je = rows(p4, P4Names.JOB_TABLE).get(List.of(Integer.toUnsignedLong(jobId)));
        if (je != null && je.action().equals(P4Names.SET_JOB)) {
            final Map<String, Long> p = je.params();
            desired = assemble(p4, jobId, p);
            index = (int) (long) p.get(P4Names.P_JOB_INDEX);
        } else {
            desired = null;
            index = -1;
        }
        final LiveJob cur = live.get(jobId);
        if (cur != null && cur.spec().equals(desired) && cur.jobIndex() == index) {
            return;
        }
        if (cur != null) {
            retire(cur);
            live.remove(jobId);
            // The dataplane refuses another spec under the same (generation, secret); an operator's table
            // edit that keeps set_job as it was still gets a fresh job (as in the P4 program, the table wins).
            if (desired == null || desired.sameRegistration(cur.spec())) {
                sw.removeJob(jobId);
            }
        }
        if (desired != null) {
            sw.registerJob(desired);   // replaces a previous attempt: every slot starts afresh
            live.put(jobId, new LiveJob(desired, index));
        }
    }

    private JobSpec assemble(final P4InfoIndex p4, final int jobId, final Map<String, Long> p) {
        final P4InfoIndex.Table wt = p4.table(P4Names.WORKER_TABLE);
        final int jobField = wt.fields().indexOf(wt.field(P4Names.F_JOB_ID));
        final int addrField = wt.fields().indexOf(wt.field(P4Names.F_SRC_ADDR));
        final int portField = wt.fields().indexOf(wt.field(P4Names.F_SRC_PORT));
        final int n = (int) (long) p.get(P4Names.P_NUM_WORKERS);
        final InetSocketAddress[] workers = new InetSocketAddress[n];
        for (final Stored w : rows(p4, P4Names.WORKER_TABLE).values()) {
            if (w.key().get(jobField) != Integer.toUnsignedLong(jobId) || !w.action().equals(P4Names.SET_WORKER)) {
                continue;
            }
            final long rank = w.params().get(P4Names.P_RANK);
            if (rank >= n || workers[(int) rank] != null) {
                return null;   // inconsistent: a rank outside the job, or twice; the job stays out
            }
            workers[(int) rank] = endpoint(w.key().get(addrField), w.key().get(portField));
        }
        for (final InetSocketAddress w : workers) {
            if (w == null) {
                return null;   // not complete yet
            }
        }
        return new JobSpec(jobId, (int) (long) p.get(P4Names.P_GENERATION), (int) (long) p.get(P4Names.P_SECRET),
                (int) (long) p.get(P4Names.P_K),
                (int) (long) p.get(P4Names.P_POOL_SIZE), List.of(workers));
    }

    private static InetSocketAddress endpoint(final long ip, final long port) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16),
                    (byte) (ip >>> 8), (byte) ip}), (int) port);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException("4-byte address rejected", e);
        }
    }

    private Map<List<Long>, Stored> rows(final P4InfoIndex p4, final String table) {
        return tables.getOrDefault(p4.table(table).id(), Map.of());
    }

    /** Adds a job's counters to its index's retained cells before the dataplane forgets them. */
    private void retire(final LiveJob job) {
        final JobCounters c = sw.counters(job.spec().jobId());
        if (c != null && job.jobIndex() < retained.length) {
            retained[job.jobIndex()] = retained[job.jobIndex()].plus(c);
        }
    }

    // --------------------------------------------------------------------------------- read

    @Override
    public void read(final ReadRequest request, final StreamObserver<ReadResponse> out) {
        final ReadResponse.Builder resp = ReadResponse.newBuilder();
        try {
            synchronized (lock) {
                checkDevice(request.getDeviceId());
                final Pipeline p = pipeline();
                Map<String, long[]> cells = null;
                for (final Entity e : request.getEntitiesList()) {
                    switch (e.getEntityCase()) {
                        case TABLE_ENTRY -> readTable(p.index(), e.getTableEntry(), resp);
                        case PACKET_REPLICATION_ENGINE_ENTRY -> readGroups(e.getPacketReplicationEngineEntry(), resp);
                        case COUNTER_ENTRY -> {
                            if (cells == null) {
                                cells = counterCells(p.index());
                            }
                            readCounter(p.index(), e.getCounterEntry(), cells, resp);
                        }
                        case REGISTER_ENTRY -> throw new Failure(Status.Code.UNIMPLEMENTED,
                                "register reads are not supported (nor on BMv2)");
                        default -> throw new Failure(Status.Code.UNIMPLEMENTED, "reading " + e.getEntityCase()
                                + " is not supported");
                    }
                }
            }
        } catch (final Failure f) {
            out.onError(f.status.asRuntimeException());
            return;
        }
        out.onNext(resp.build());
        out.onCompleted();
    }

    private void readTable(final P4InfoIndex p4, final TableEntry query, final ReadResponse.Builder resp)
            throws Failure {
        final Collection<P4InfoIndex.Table> which = query.getTableId() == 0 ? p4.tables()
                : List.of(table(p4, query.getTableId()));
        for (final P4InfoIndex.Table t : which) {
            final Map<List<Long>, Stored> rows = tables.getOrDefault(t.id(), Map.of());
            if (query.getTableId() != 0 && query.getMatchCount() > 0) {
                final Stored s = rows.get(key(t, query));
                if (s != null) {
                    resp.addEntities(Entity.newBuilder().setTableEntry(s.entry()));
                }
                continue;
            }
            for (final Stored s : rows.values()) {
                resp.addEntities(Entity.newBuilder().setTableEntry(s.entry()));
            }
        }
    }

    private void readGroups(final PacketReplicationEngineEntry query, final ReadResponse.Builder resp)
            throws Failure {
        if (!query.hasMulticastGroupEntry()) {
            throw new Failure(Status.Code.UNIMPLEMENTED, "only multicast groups are supported, got "
                    + query.getTypeCase());
        }
        final int id = query.getMulticastGroupEntry().getMulticastGroupId();
        for (final MulticastGroupEntry g : groups.values()) {
            if (id == 0 || g.getMulticastGroupId() == id) {
                resp.addEntities(Entity.newBuilder().setPacketReplicationEngineEntry(
                        PacketReplicationEngineEntry.newBuilder().setMulticastGroupEntry(g)));
            }
        }
    }

    private void readCounter(final P4InfoIndex p4, final CounterEntry query, final Map<String, long[]> cells,
                             final ReadResponse.Builder resp) throws Failure {
        final List<P4InfoIndex.Counter> which;
        if (query.getCounterId() == 0) {
            which = p4.counters();
        } else {
            final P4InfoIndex.Counter c = p4.counterById(query.getCounterId());
            if (c == null) {
                throw new Failure(Status.Code.NOT_FOUND, "counter id " + query.getCounterId() + " is not in the P4Info");
            }
            which = List.of(c);
        }
        for (final P4InfoIndex.Counter c : which) {
            final long[] values = cells.getOrDefault(c.name(), new long[(int) c.size()]);
            long from = 0;
            long to = c.size();
            if (query.hasIndex()) {
                from = query.getIndex().getIndex();
                to = from + 1;
                if (from < 0 || from >= c.size()) {
                    throw new Failure(Status.Code.INVALID_ARGUMENT, "counter " + c.name() + ": index " + from
                            + " outside 0.." + (c.size() - 1));
                }
            }
            for (long i = from; i < to; i++) {
                resp.addEntities(Entity.newBuilder().setCounterEntry(CounterEntry.newBuilder().setCounterId(c.id())
                        .setIndex(Index.newBuilder().setIndex(i))
                        .setData(CounterData.newBuilder().setPacketCount(values[(int) i]))));
            }
        }
    }

    /**
     * Every counter cell of switchml.p4, from the dataplane's counters: drop_reason[i] is DropReason i over
     * the switch and all jobs; job_packets_in counts, as the P4 program does, every well-formed packet of a
     * known job that carries the job's secret (the dataplane's packetsIn plus the job's drops of steps 4-7).
     */
    private Map<String, long[]> counterCells(final P4InfoIndex p4) {
        final int jobs = retained.length;
        final JobCounters[] perIndex = retained.clone();
        for (final LiveJob j : live.values()) {
            final JobCounters c = sw.counters(j.spec().jobId());
            if (c != null && j.jobIndex() < jobs) {
                perIndex[j.jobIndex()] = perIndex[j.jobIndex()].plus(c);
            }
        }
        // drop_reason is the dataplane's own switch-wide count (it outlives jobs, like the P4 counter).
        final SwitchCounters now = sw.traffic().counters().minus(switchBaseline);
        final long[] dropReason = new long[(int) p4.counter(P4Names.DROP_REASON).size()];
        for (final DropReason r : DropReason.values()) {
            if (r.ordinal() < dropReason.length) {
                dropReason[r.ordinal()] = now.drops(r);
            }
        }
        final long stride = p4.counter(P4Names.JOB_DROPS).size() / Math.max(1, jobs);
        final long[] in = new long[jobs];
        final long[] out = new long[jobs];
        final long[] retx = new long[jobs];
        final long[] drops = new long[(int) p4.counter(P4Names.JOB_DROPS).size()];
        for (int i = 0; i < jobs; i++) {
            final JobCounters c = perIndex[i];
            in[i] = packetsInAsP4Counts(c);
            out[i] = c.packetsOut();
            retx[i] = c.retransmissions();
            for (final DropReason r : JOB_REASONS) {
                if (r.ordinal() < stride) {
                    drops[(int) (i * stride + r.ordinal())] = c.drops(r);
                }
            }
        }
        final Map<String, long[]> cells = new HashMap<>();
        cells.put(P4Names.DROP_REASON, dropReason);
        cells.put(P4Names.JOB_PACKETS_IN, in);
        cells.put(P4Names.JOB_PACKETS_OUT, out);
        cells.put(P4Names.JOB_RETRANSMISSIONS, retx);
        cells.put(P4Names.JOB_DROPS, drops);
        return cells;
    }

    /**
     * job_packets_in as the P4 program counts it: every packet that passed steps 1-3, so the dataplane's
     * packetsIn (steps 1-7 passed) plus the job's drops at steps 4-7.
     */
    private static long packetsInAsP4Counts(final JobCounters c) {
        return c.packetsIn() + c.drops(DropReason.STALE_GENERATION) + c.drops(DropReason.UNKNOWN_SENDER)
                + c.drops(DropReason.WRONG_K) + c.drops(DropReason.BAD_SLOT);
    }

    /** Ends every stream (server shutdown). */
    void closeAll() {
        synchronized (lock) {
            for (final Session s : List.copyOf(sessions)) {
                try {
                    s.out.onError(Status.UNAVAILABLE.withDescription("switch shutting down").asRuntimeException());
                } catch (final RuntimeException ignored) {
                    // Already cancelled by the client.
                }
                s.closed = true;
            }
            sessions.clear();
        }
    }

    /** Jobs currently assembled and running on the dataplane (for tests and the main's log). */
    List<JobSpec> liveJobs() {
        synchronized (lock) {
            return live.values().stream().map(LiveJob::spec).toList();
        }
    }

    @Override
    public String toString() {
        return "P4Runtime service of device " + deviceId + " " + Objects.toString(sw.address());
    }

}

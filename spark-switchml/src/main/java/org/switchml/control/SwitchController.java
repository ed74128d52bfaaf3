package org.switchml.control;

import org.switchml.p4info.Gencode;

import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.p4info.Bytestrings;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import org.switchml.protocol.Wire;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.CapabilitiesRequest;
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
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.Replica;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * P4Runtime controller of one switch running switchml.p4: BMv2 ({@code simple_switch_grpc}) or the Java
 * software switch behind a {@link org.switchml.dataplane.runtime.SwitchRuntimeServer}. It arbitrates for primary on a StreamChannel kept
 * open for its whole life (a target drops a primary whose stream closed), pushes the pipeline, installs
 * and removes jobs, and reads counters. Every name is resolved through the P4Info.
 *
 * <p>A job is installed as in p4/README.md ("Registering job J"): worker_table and result_table entries
 * per rank and the multicast group first, the job_table entry last, so traffic starts only once the job is
 * complete; removal deletes the job_table entry first, so traffic stops before the rest goes. The
 * controller allocates each job's pool range, counter index and multicast group among the jobs it
 * registered. Registers are never touched (BMv2 answers UNIMPLEMENTED for them).
 *
 * <p>Thread-safe: public methods are serialised.
 */
public final class SwitchController implements AutoCloseable {
    static {
        Gencode.quiet(); // before any P4Runtime message class loads
    }

    private final ControllerOptions options;
    private final P4InfoIndex p4;
    private final ManagedChannel channel;
    private final Uint128 electionId;
    private final Arbitration arbitration = new Arbitration();
    private final StreamObserver<StreamMessageRequest> stream;
    private final Map<Integer, Installed> jobs = new LinkedHashMap<>();
    private final SecureRandom secrets = new SecureRandom();
    private Target target;
    private ResourceAllocator allocator;
    private boolean closed;

    /** A registered job and its counter cells at registration time. */
    private record Installed(RegisteredJob job, JobCounters baseline) {
    }

    private SwitchController(final ControllerOptions options, final ManagedChannel channel) {
        this.options = options;
        this.p4 = options.p4info();
        this.channel = channel;
        this.electionId = Uint128.newBuilder().setHigh(0).setLow(options.electionId()).build();
        this.stream = P4RuntimeGrpc.newStub(channel).streamChannel(arbitration);
    }

    /**
     * Connects and becomes primary: opens the StreamChannel and sends a MasterArbitrationUpdate. Fails with
     * the switch's status when it refuses (e.g. INVALID_ARGUMENT: the election id is used by another live
     * controller) or when another controller with a higher election id is primary.
     */
    public static SwitchController connect(final ControllerOptions options) {
        final ManagedChannel channel = options.unixSocket() != null
                // gRPC's "unix:" target: a P4Runtime server on a Unix domain socket (needs the epoll transport).
                ? Grpc.newChannelBuilder("unix://" + options.unixSocket(), InsecureChannelCredentials.create()).build()
                : Grpc.newChannelBuilderForAddress(options.host(), options.port(),
                        InsecureChannelCredentials.create()).build();
        return connect(options, channel);
    }

    /**
     * Connects over {@code channel}, which the caller built (for example gRPC's in-process transport to a
     * software switch's server in this JVM), and becomes primary; the controller owns and closes the channel.
     */
    public static SwitchController connect(final ControllerOptions options, final ManagedChannel channel) {
        final SwitchController c = new SwitchController(options, channel);
        try {
            c.arbitrate();
            return c;
        } catch (final RuntimeException e) {
            c.close();
            throw e;
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
        return (colon > 0 ? msg.substring(0, colon) : msg).toLowerCase(java.util.Locale.ROOT);
    }

    /** Connects to {@code host:port} with the default options (device 0, election id 1). */
    public static SwitchController connect(final String host, final int port) {
        return connect(ControllerOptions.of(host, port));
    }

    private void arbitrate() {
        stream.onNext(StreamMessageRequest.newBuilder().setArbitration(MasterArbitrationUpdate.newBuilder()
                .setDeviceId(options.deviceId()).setElectionId(electionId)).build());
        final MasterArbitrationUpdate answer;
        try {
            answer = arbitration.first.get(options.rpcTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchControlException(Status.Code.CANCELLED, "interrupted while arbitrating with " + where());
        } catch (final TimeoutException e) {
            throw new SwitchControlException(Status.Code.DEADLINE_EXCEEDED, where() + " sent no arbitration answer within "
                    + options.rpcTimeoutMs() + " ms");
        } catch (final ExecutionException e) {
            final Status s = Status.fromThrowable(e.getCause());
            if (s.getCode() == Status.Code.UNAVAILABLE) {
                // Nothing answered at all (no server, refused, unreachable): say that, not "refused arbitration".
                throw new SwitchControlException(s.getCode(), "P4Runtime server unreachable: "
                        + unreachableReason(s) + " at " + options.target(), List.of(), e.getCause());
            }
            throw new SwitchControlException(s.getCode(), where() + " refused arbitration for election id "
                    + options.electionId() + ": " + s.getCode() + ": " + s.getDescription(), List.of(), e.getCause());
        }
        if (answer.getStatus().getCode() != Status.Code.OK.value()) {
            throw new SwitchControlException(Status.Code.PERMISSION_DENIED, "controller with election id "
                    + options.electionId() + " is not primary on " + where() + ": the primary has election id "
                    + text(answer.getElectionId()) + " (" + answer.getStatus().getMessage() + ")");
        }
    }

    /** Whether the switch last told this controller it is primary, with the stream still open. */
    public boolean isPrimary() {
        return arbitration.primary;
    }

    /**
     * Waits, bounded, until the switch says this controller is primary again (after a controller with a
     * higher election id went away); returns whether it is.
     */
    public boolean awaitPrimary(final long timeoutMs) throws InterruptedException {
        return arbitration.awaitPrimary(timeoutMs);
    }

    /** The P4Info this controller pushes and resolves names with. */
    public P4InfoIndex p4info() {
        return p4;
    }

    /** The target kind of the pipeline this controller pushed, or null before {@link #setPipeline}. */
    public synchronized Target target() {
        return target;
    }

    /** The P4Runtime API version the switch implements (Capabilities RPC). */
    public String apiVersion() {
        try {
            return blocking().capabilities(CapabilitiesRequest.getDefaultInstance()).getP4RuntimeApiVersion();
        } catch (final StatusRuntimeException e) {
            throw failure(e, "Capabilities", List.of());
        }
    }

    /**
     * Pushes the forwarding pipeline (SetForwardingPipelineConfig, VERIFY_AND_COMMIT): the P4Info, plus the
     * BMv2 JSON for BMv2. Committing clears the switch's forwarding state, so every job this controller
     * knew is forgotten.
     */
    public synchronized void setPipeline(final PipelineConfig config) {
        requirePrimary("set the pipeline");
        final ForwardingPipelineConfig.Builder cfg = ForwardingPipelineConfig.newBuilder()
                .setP4Info(p4.p4info())
                .setP4DeviceConfig(ByteString.copyFrom(config.deviceConfig()))
                .setCookie(ForwardingPipelineConfig.Cookie.newBuilder().setCookie(config.cookie()));
        try {
            blocking().setForwardingPipelineConfig(SetForwardingPipelineConfigRequest.newBuilder()
                    .setDeviceId(options.deviceId()).setElectionId(electionId)
                    .setAction(SetForwardingPipelineConfigRequest.Action.VERIFY_AND_COMMIT)
                    .setConfig(cfg).build());
        } catch (final StatusRuntimeException e) {
            throw failure(e, "SetForwardingPipelineConfig (" + config.target() + ")", List.of());
        }
        target = config.target();
        allocator = ResourceAllocator.forPipeline(p4);
        jobs.clear();
    }

    /** The switch's current pipeline (GetForwardingPipelineConfig, everything). */
    public ForwardingPipelineConfig readPipeline() {
        try {
            return blocking().getForwardingPipelineConfig(GetForwardingPipelineConfigRequest.newBuilder()
                    .setDeviceId(options.deviceId()).build()).getConfig();
        } catch (final StatusRuntimeException e) {
            throw failure(e, "GetForwardingPipelineConfig", List.of());
        }
    }

    // ------------------------------------------------------------------------------------------- jobs

    /**
     * Registers {@code spec} with allocated resources and a fresh secret; the workers join the returned
     * job's {@link RegisteredJob#spec()}. On BMv2 each worker's switch port and MAC come from the
     * controller's {@link HostTable} ({@link ControllerOptions#hosts()}); the software switch needs none.
     */
    public RegisteredJob registerJob(final JobSpec spec) {
        return registerJob(spec, List.of(), null);
    }

    /** Registers {@code spec} with one attachment per rank (required for BMv2), with allocated resources. */
    public RegisteredJob registerJob(final JobSpec spec, final List<WorkerAttachment> attachments) {
        return registerJob(spec, attachments, null);
    }

    /**
     * Registers {@code spec} under a fresh random secret. {@code attachments} gives each rank's MAC and switch
     * port (BMv2 needs them; the software switch ignores them, so it may be empty there). {@code requested}
     * pins the job's resources instead of allocating them; it is refused when it collides with a live job's.
     *
     * <p>Every registration draws a new secret (whatever {@code spec} carries) and the switch drops packets
     * without it, so the returned {@link RegisteredJob#spec()} is what the workers must join: packets of an
     * earlier registration of the job, or forged ones, never reach its slots. Registering a job id that is
     * live starts a new session of it, with the same or a new generation: when nothing but the generation
     * and secret change, only its job_table entry is modified (the dataplane starts every slot afresh);
     * otherwise the old job is removed first.
     *
     * @return the job as installed, with the secret its workers need
     * @throws IllegalArgumentException k ≠ 64 on BMv2, missing attachments, a non-IPv4 worker
     * @throws SwitchControlException   no free resource, a collision, or the switch refused a write
     */
    public synchronized RegisteredJob registerJob(final JobSpec requestedSpec, final List<WorkerAttachment> attachments,
                                                  final JobResources requested) {
        requirePipeline("register job " + requestedSpec.jobName());
        final List<WorkerAttachment> att = attachments == null || attachments.isEmpty()
                ? fromHostTable(requestedSpec) : List.copyOf(attachments);
        validate(requestedSpec, att);
        final Installed existing = jobs.get(requestedSpec.jobId());
        final JobSpec spec = requestedSpec.withSecret(freshSecret(existing == null ? null : existing.job().spec()));
        if (existing != null) {
            final JobSpec old = existing.job().spec();
            final boolean sameShape = old.k() == spec.k() && old.poolSize() == spec.poolSize()
                    && old.workers().equals(spec.workers()) && existing.job().attachments().equals(att)
                    && (requested == null || requested.equals(existing.job().resources()));
            if (sameShape) {
                final RegisteredJob job = new RegisteredJob(spec, existing.job().resources(), att);
                write(List.of(update(Update.Type.MODIFY, jobEntry(job))), "new session of job " + spec.jobName(), false);
                jobs.put(spec.jobId(), new Installed(job, existing.baseline()));
                return job;
            }
            removeJob(spec.jobId());
        }
        final JobResources res = allocator.allocate(spec, requested);
        final RegisteredJob job = new RegisteredJob(spec, res, att);
        final List<Update> parts = new ArrayList<>();
        try {
            final JobCounters baseline = readJobCells(res.jobIndex());
            for (final TableEntry e : workerEntries(job)) {
                parts.add(update(Update.Type.INSERT, e));
            }
            for (final TableEntry e : resultEntries(job)) {
                parts.add(update(Update.Type.INSERT, e));
            }
            parts.add(update(Update.Type.INSERT, groupEntity(job)));
            write(parts, "install workers, results and multicast group of job " + spec.jobName(), false);
            write(List.of(update(Update.Type.INSERT, jobEntry(job))), "install job " + spec.jobName(), false);
            jobs.put(spec.jobId(), new Installed(job, baseline));
            return job;
        } catch (final RuntimeException e) {
            // Best effort: take back whatever part of the job made it, then free its resources.
            final List<Update> undo = new ArrayList<>();
            undo.add(update(Update.Type.DELETE, jobEntry(job)));
            for (final Update u : parts) {
                undo.add(u.toBuilder().setType(Update.Type.DELETE).build());
            }
            try {
                write(undo, "undo job " + spec.jobName(), true);
            } catch (final RuntimeException undoFailure) {
                e.addSuppressed(undoFailure);
            }
            allocator.release(spec.jobId());
            throw e;
        }
    }

    /**
     * Each rank's attachment from the host table: all of them on BMv2 (a worker missing there is an
     * error naming it), none when the table is empty on the software switch, which needs none.
     */
    private List<WorkerAttachment> fromHostTable(final JobSpec spec) {
        final HostTable hosts = options.hosts();
        if (hosts.isEmpty() && target != Target.BMV2) {
            return List.of();
        }
        final List<WorkerAttachment> out = new ArrayList<>();
        for (int r = 0; r < spec.numWorkers(); r++) {
            final InetSocketAddress w = spec.workers().get(r);
            final WorkerAttachment a = hosts.lookup(w.getAddress());
            if (a == null) {
                if (target != Target.BMV2) {
                    return List.of();
                }
                throw new IllegalArgumentException("job " + spec.jobName() + ": rank " + r + "'s address "
                        + w.getAddress().getHostAddress() + " is not in the switch's host table " + hosts
                        + ": BMv2 needs a worker attachment (switch port, MAC) per rank, from the host table "
                        + "(ControllerOptions.withHosts, spark.switchml.p4.hosts) or given to registerJob");
            }
            out.add(a);
        }
        return out;
    }

    /** A random secret, never the previous registration's (so the new one is always a new session). */
    private int freshSecret(final JobSpec previous) {
        while (true) {
            final int secret = secrets.nextInt();
            if (previous == null || secret != previous.secret()) {
                return secret;
            }
        }
    }

    private void validate(final JobSpec spec, final List<WorkerAttachment> att) {
        if (target == Target.BMV2) {
            if (spec.k() != Wire.P4_K) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": k = " + spec.k() + " but the BMv2 "
                        + "pipeline (p4/switchml.p4) aggregates only k = " + Wire.P4_K);
            }
            if (att.size() != spec.numWorkers()) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": BMv2 needs a worker attachment (MAC, "
                        + "switch port) per rank: " + spec.numWorkers() + " ranks, " + att.size() + " attachments");
            }
        } else if (!att.isEmpty() && att.size() != spec.numWorkers()) {
            throw new IllegalArgumentException("job " + spec.jobName() + ": " + att.size() + " attachments for "
                    + spec.numWorkers() + " ranks");
        }
        for (int r = 0; r < spec.numWorkers(); r++) {
            if (!(spec.workers().get(r).getAddress() instanceof Inet4Address)) {
                throw new IllegalArgumentException("job " + spec.jobName() + ": rank " + r + " address "
                        + spec.workers().get(r) + " is not IPv4 (the switch matches IPv4 sources)");
            }
        }
    }

    /**
     * Removes a job: its job_table entry first (traffic stops: later packets are UNKNOWN_JOB), then its
     * worker and result entries and multicast group; frees its resources. Entries already gone are fine.
     *
     * @return whether this controller had the job registered
     */
    public synchronized boolean removeJob(final int jobId) {
        final Installed installed = jobs.get(jobId);
        if (installed == null) {
            return false;
        }
        final RegisteredJob job = installed.job();
        final String name = job.spec().jobName();
        write(List.of(update(Update.Type.DELETE, jobEntry(job))), "remove job " + name, true);
        final List<Update> rest = new ArrayList<>();
        for (final TableEntry e : workerEntries(job)) {
            rest.add(update(Update.Type.DELETE, e));
        }
        for (final TableEntry e : resultEntries(job)) {
            rest.add(update(Update.Type.DELETE, e));
        }
        rest.add(update(Update.Type.DELETE, groupEntity(job)));
        write(rest, "remove workers, results and multicast group of job " + name, true);
        jobs.remove(jobId);
        allocator.release(jobId);
        return true;
    }

    /** The job as registered, or null. */
    public synchronized RegisteredJob job(final int jobId) {
        final Installed i = jobs.get(jobId);
        return i == null ? null : i.job();
    }

    /** Every job this controller has registered. */
    public synchronized List<RegisteredJob> jobs() {
        return jobs.values().stream().map(Installed::job).toList();
    }

    // ------------------------------------------------------------------------------------------- counters

    /** The job's counters since its registration, with the P4 program's meanings (see {@link JobCounters}). */
    public synchronized JobCounters readJobCounters(final int jobId) {
        final Installed installed = jobs.get(jobId);
        if (installed == null) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId) + " is not registered with "
                    + "this controller");
        }
        return readJobCells(installed.job().resources().jobIndex()).minus(installed.baseline());
    }

    /** The switch-wide drop counter, cumulative since the pipeline was committed. */
    public SwitchCounters readSwitchCounters() {
        final long[] cells = readCounter(P4Names.DROP_REASON);
        // drop_reason's index is the DropReason ordinal; NOT_SWITCHML_INDEX follows the last reason.
        return new SwitchCounters(DropCounts.of(r -> r.ordinal() < cells.length ? cells[r.ordinal()] : 0),
                P4Names.NOT_SWITCHML_INDEX < cells.length ? cells[P4Names.NOT_SWITCHML_INDEX] : 0);
    }

    /** Packet counts of every cell of the counter called {@code name} (a wildcard CounterEntry read). */
    public long[] readCounter(final String name) {
        final P4InfoIndex.Counter c = p4.counter(name);
        final long[] out = new long[(int) c.size()];
        for (final ReadResponse r : read(List.of(Entity.newBuilder().setCounterEntry(
                CounterEntry.newBuilder().setCounterId(c.id())).build()), "read counter " + c.name())) {
            for (final Entity e : r.getEntitiesList()) {
                final long i = e.getCounterEntry().getIndex().getIndex();
                if (i >= 0 && i < out.length) {
                    out[(int) i] = e.getCounterEntry().getData().getPacketCount();
                }
            }
        }
        return out;
    }

    /** The cells of counter index {@code index}: job_packets_in/out, job_retransmissions, its job_drops. */
    private JobCounters readJobCells(final int index) {
        final P4InfoIndex.Counter in = p4.counter(P4Names.JOB_PACKETS_IN);
        final P4InfoIndex.Counter out = p4.counter(P4Names.JOB_PACKETS_OUT);
        final P4InfoIndex.Counter retx = p4.counter(P4Names.JOB_RETRANSMISSIONS);
        final P4InfoIndex.Counter drops = p4.counter(P4Names.JOB_DROPS);
        final int stride = (int) (drops.size() / in.size());
        final List<Entity> ask = new ArrayList<>();
        ask.add(counterCell(in.id(), index));
        ask.add(counterCell(out.id(), index));
        ask.add(counterCell(retx.id(), index));
        for (int r = 0; r < stride; r++) {
            ask.add(counterCell(drops.id(), (long) index * stride + r));
        }
        final Map<String, Long> got = new HashMap<>();
        for (final ReadResponse resp : read(ask, "read counters of job index " + index)) {
            for (final Entity e : resp.getEntitiesList()) {
                final CounterEntry c = e.getCounterEntry();
                got.put(c.getCounterId() + "/" + c.getIndex().getIndex(), c.getData().getPacketCount());
            }
        }
        // job_drops holds a stride of cells per job index, one per DropReason ordinal.
        final DropCounts jobDrops = DropCounts.of(r -> r.ordinal() < stride
                ? got.getOrDefault(drops.id() + "/" + ((long) index * stride + r.ordinal()), 0L) : 0);
        return new JobCounters(got.getOrDefault(in.id() + "/" + index, 0L),
                got.getOrDefault(out.id() + "/" + index, 0L), got.getOrDefault(retx.id() + "/" + index, 0L), jobDrops);
    }

    private static Entity counterCell(final int counterId, final long index) {
        return Entity.newBuilder().setCounterEntry(CounterEntry.newBuilder().setCounterId(counterId)
                .setIndex(Index.newBuilder().setIndex(index))).build();
    }

    // ------------------------------------------------------------------------------------------- entries

    /** A table entry with every match field and action parameter given by name. */
    public TableEntry tableEntry(final String table, final Map<String, Long> match, final String action,
                                 final Map<String, Long> params) {
        final TableEntry.Builder b = matchOnly(table, match).toBuilder();
        if (action != null) {
            final P4InfoIndex.Action a = p4.action(action);
            final P4RuntimeOuterClass.Action.Builder ab =
                    P4RuntimeOuterClass.Action.newBuilder().setActionId(a.id());
            final Map<String, Long> left = new HashMap<>(params);
            for (final P4InfoIndex.Field f : a.params()) {
                final Long v = left.remove(f.name());
                if (v == null) {
                    throw new IllegalArgumentException("action " + a.name() + ": parameter '" + f.name() + "' missing");
                }
                ab.addParams(P4RuntimeOuterClass.Action.Param.newBuilder().setParamId(f.id())
                        .setValue(Bytestrings.encode(v, f.bitwidth(), a.name() + " parameter " + f.name())));
            }
            if (!left.isEmpty()) {
                a.param(left.keySet().iterator().next());   // throws, naming the unknown parameter
            }
            b.setAction(TableAction.newBuilder().setAction(ab));
        }
        return b.build();
    }

    private TableEntry matchOnly(final String table, final Map<String, Long> match) {
        final P4InfoIndex.Table t = p4.table(table);
        final TableEntry.Builder b = TableEntry.newBuilder().setTableId(t.id());
        final Map<String, Long> left = new HashMap<>(match);
        for (final P4InfoIndex.Field f : t.fields()) {
            final Long v = left.remove(f.name());
            if (v == null) {
                throw new IllegalArgumentException("table " + t.name() + ": match field '" + f.name() + "' missing");
            }
            b.addMatch(FieldMatch.newBuilder().setFieldId(f.id()).setExact(FieldMatch.Exact.newBuilder()
                    .setValue(Bytestrings.encode(v, f.bitwidth(), t.name() + " field " + f.name()))));
        }
        if (!left.isEmpty()) {
            t.field(left.keySet().iterator().next());   // throws, naming the unknown field
        }
        return b.build();
    }

    /** Inserts a table entry (low-level; jobs use {@link #registerJob}). */
    public synchronized void insertEntry(final String table, final Map<String, Long> match, final String action,
                                         final Map<String, Long> params) {
        write(List.of(update(Update.Type.INSERT, tableEntry(table, match, action, params))), "insert into " + table, false);
    }

    /** Modifies a table entry's action. */
    public synchronized void modifyEntry(final String table, final Map<String, Long> match, final String action,
                                         final Map<String, Long> params) {
        write(List.of(update(Update.Type.MODIFY, tableEntry(table, match, action, params))), "modify in " + table, false);
    }

    /** Deletes a table entry. */
    public synchronized void deleteEntry(final String table, final Map<String, Long> match) {
        write(List.of(update(Update.Type.DELETE, matchOnly(table, match))), "delete from " + table, false);
    }

    /** Writes a multicast group (INSERT, MODIFY or DELETE). */
    public synchronized void writeMulticastGroup(final Update.Type type, final int group,
                                                 final List<MulticastReplica> replicas) {
        write(List.of(update(type, groupEntity(group, replicas))), type + " multicast group " + group, false);
    }

    /** Every entry of the table called {@code name} (a wildcard read). */
    public List<TableEntry> readEntries(final String table) {
        final P4InfoIndex.Table t = p4.table(table);
        final List<TableEntry> out = new ArrayList<>();
        for (final ReadResponse r : read(List.of(Entity.newBuilder().setTableEntry(TableEntry.newBuilder()
                .setTableId(t.id())).build()), "read table " + t.name())) {
            for (final Entity e : r.getEntitiesList()) {
                out.add(e.getTableEntry());
            }
        }
        return out;
    }

    /** Every multicast group on the switch. */
    public List<MulticastGroupEntry> readMulticastGroups() {
        final List<MulticastGroupEntry> out = new ArrayList<>();
        for (final ReadResponse r : read(List.of(Entity.newBuilder().setPacketReplicationEngineEntry(
                PacketReplicationEngineEntry.newBuilder().setMulticastGroupEntry(MulticastGroupEntry.newBuilder()))
                .build()), "read multicast groups")) {
            for (final Entity e : r.getEntitiesList()) {
                out.add(e.getPacketReplicationEngineEntry().getMulticastGroupEntry());
            }
        }
        return out;
    }

    /**
     * Sends a raw Write batch (escape hatch for tools and tests). Failures carry the per-update errors.
     */
    public synchronized void writeUpdates(final List<Update> updates) {
        write(updates, "write", false);
    }

    private List<TableEntry> workerEntries(final RegisteredJob job) {
        final JobSpec s = job.spec();
        final List<TableEntry> out = new ArrayList<>();
        for (int r = 0; r < s.numWorkers(); r++) {
            final InetSocketAddress w = s.workers().get(r);
            out.add(tableEntry(P4Names.WORKER_TABLE,
                    Map.of(P4Names.F_JOB_ID, Integer.toUnsignedLong(s.jobId()), P4Names.F_SRC_ADDR, ipv4(w),
                            P4Names.F_SRC_PORT, (long) w.getPort()),
                    P4Names.SET_WORKER, Map.of(P4Names.P_RANK, (long) r, P4Names.P_BITMAP_BIT, 1L << r)));
        }
        return out;
    }

    private List<TableEntry> resultEntries(final RegisteredJob job) {
        final JobSpec s = job.spec();
        final List<TableEntry> out = new ArrayList<>();
        for (int r = 0; r < s.numWorkers(); r++) {
            final InetSocketAddress w = s.workers().get(r);
            final long mac = job.attachments().isEmpty() ? 0 : job.attachments().get(r).mac();
            out.add(tableEntry(P4Names.RESULT_TABLE,
                    Map.of(P4Names.F_JOB_ID, Integer.toUnsignedLong(s.jobId()), P4Names.F_EGRESS_RID, (long) r),
                    P4Names.SET_RESULT_DEST, Map.of(P4Names.P_DST_MAC, mac, P4Names.P_DST_IP, ipv4(w),
                            P4Names.P_DST_PORT, (long) w.getPort())));
        }
        return out;
    }

    private TableEntry jobEntry(final RegisteredJob job) {
        final JobSpec s = job.spec();
        final JobResources r = job.resources();
        final Map<String, Long> params = new HashMap<>();
        params.put(P4Names.P_GENERATION, (long) s.generation());
        params.put(P4Names.P_NUM_WORKERS, (long) s.numWorkers());
        params.put(P4Names.P_POOL_BASE, (long) r.poolBase());
        params.put(P4Names.P_POOL_SIZE, (long) r.poolSize());
        params.put(P4Names.P_MCAST_GRP, (long) r.multicastGroup());
        params.put(P4Names.P_JOB_INDEX, (long) r.jobIndex());
        params.put(P4Names.P_K, (long) s.k());
        params.put(P4Names.P_SECRET, Integer.toUnsignedLong(s.secret()));
        return tableEntry(P4Names.JOB_TABLE, Map.of(P4Names.F_JOB_ID, Integer.toUnsignedLong(s.jobId())),
                P4Names.SET_JOB, params);
    }

    private PacketReplicationEngineEntry groupEntity(final RegisteredJob job) {
        final List<MulticastReplica> replicas = new ArrayList<>();
        for (int r = 0; r < job.spec().numWorkers(); r++) {
            // instance = rank: v1model hands it to egress as egress_rid, the key of result_table.
            replicas.add(new MulticastReplica(job.attachments().isEmpty() ? 0 : job.attachments().get(r).switchPort(), r));
        }
        return groupEntity(job.resources().multicastGroup(), replicas);
    }

    private static PacketReplicationEngineEntry groupEntity(final int group, final List<MulticastReplica> replicas) {
        final MulticastGroupEntry.Builder g = MulticastGroupEntry.newBuilder().setMulticastGroupId(group);
        for (final MulticastReplica r : replicas) {
            g.addReplicas(Replica.newBuilder().setEgressPort(r.egressPort()).setInstance(r.instance()));
        }
        return PacketReplicationEngineEntry.newBuilder().setMulticastGroupEntry(g).build();
    }

    private static long ipv4(final InetSocketAddress a) {
        final byte[] b = a.getAddress().getAddress();
        return ((b[0] & 0xFFL) << 24) | ((b[1] & 0xFFL) << 16) | ((b[2] & 0xFFL) << 8) | (b[3] & 0xFFL);
    }

    private static Update update(final Update.Type type, final TableEntry entry) {
        return Update.newBuilder().setType(type).setEntity(Entity.newBuilder().setTableEntry(entry)).build();
    }

    private static Update update(final Update.Type type, final PacketReplicationEngineEntry pre) {
        return Update.newBuilder().setType(type).setEntity(Entity.newBuilder().setPacketReplicationEngineEntry(pre))
                .build();
    }

    // ------------------------------------------------------------------------------------------- RPCs

    private P4RuntimeGrpc.P4RuntimeBlockingStub blocking() {
        return P4RuntimeGrpc.newBlockingStub(channel).withDeadlineAfter(options.rpcTimeoutMs(), TimeUnit.MILLISECONDS);
    }

    /** Sends one Write batch; {@code tolerateMissing} accepts updates that failed only with NOT_FOUND. */
    private void write(final List<Update> updates, final String what, final boolean tolerateMissing) {
        if (updates.isEmpty()) {
            return;
        }
        requirePrimary(what);
        try {
            blocking().write(WriteRequest.newBuilder().setDeviceId(options.deviceId()).setElectionId(electionId)
                    .addAllUpdates(updates).build());
        } catch (final StatusRuntimeException e) {
            final SwitchControlException f = failure(e, what, updates);
            if (tolerateMissing && !f.updateErrors().isEmpty()
                    && f.updateErrors().stream().allMatch(u -> u.code() == Status.Code.NOT_FOUND)) {
                return;
            }
            throw f;
        }
    }

    private List<ReadResponse> read(final List<Entity> entities, final String what) {
        final List<ReadResponse> out = new ArrayList<>();
        try {
            final Iterator<ReadResponse> it = blocking().read(ReadRequest.newBuilder().setDeviceId(options.deviceId())
                    .addAllEntities(entities).build());
            while (it.hasNext()) {
                out.add(it.next());
            }
        } catch (final StatusRuntimeException e) {
            throw failure(e, what, List.of());
        }
        return out;
    }

    /** A failure with the switch's status and, for a Write, each failed update's p4.v1.Error. */
    private SwitchControlException failure(final StatusRuntimeException e, final String what,
                                           final List<Update> updates) {
        final List<SwitchControlException.UpdateError> errors = new ArrayList<>();
        final com.google.rpc.Status detail = StatusProto.fromThrowable(e);
        if (detail != null) {
            int i = 0;
            for (final Any any : detail.getDetailsList()) {
                if (any.is(P4RuntimeOuterClass.Error.class)) {
                    try {
                        final P4RuntimeOuterClass.Error err = any.unpack(P4RuntimeOuterClass.Error.class);
                        if (err.getCanonicalCode() != Status.Code.OK.value()) {
                            errors.add(new SwitchControlException.UpdateError(i,
                                    Status.fromCodeValue(err.getCanonicalCode()).getCode(), err.getMessage()));
                        }
                    } catch (final InvalidProtocolBufferException ignored) {
                        // Not decodable: the top-level status still says what happened.
                    }
                }
                i++;
            }
        }
        final StringBuilder msg = new StringBuilder(what).append(" on ").append(where()).append(" failed: ")
                .append(e.getStatus().getCode()).append(": ").append(e.getStatus().getDescription());
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
            final P4InfoIndex.Table t = p4.tableById(e.getTableEntry().getTableId());
            return u.getType() + " " + (t == null ? "table id " + e.getTableEntry().getTableId() : t.name());
        }
        if (e.hasPacketReplicationEngineEntry()) {
            return u.getType() + " multicast group "
                    + e.getPacketReplicationEngineEntry().getMulticastGroupEntry().getMulticastGroupId();
        }
        return u.getType() + " " + e.getEntityCase();
    }

    private void requirePrimary(final String what) {
        if (closed) {
            throw new IllegalStateException("controller for " + where() + " is closed");
        }
        if (!arbitration.primary) {
            throw new SwitchControlException(Status.Code.PERMISSION_DENIED, "cannot " + what + ": controller with "
                    + "election id " + options.electionId() + " is no longer primary on " + where()
                    + arbitration.lost());
        }
    }

    private void requirePipeline(final String what) {
        if (target == null) {
            throw new IllegalStateException("cannot " + what + ": no pipeline pushed yet (call setPipeline first)");
        }
    }

    private String where() {
        return "switch " + options.target() + " (device " + options.deviceId() + ")";
    }

    private static String text(final Uint128 id) {
        return id.getHigh() == 0 ? Long.toUnsignedString(id.getLow())
                : Long.toUnsignedString(id.getHigh()) + ":" + Long.toUnsignedString(id.getLow());
    }

    /** Closes the stream (giving up primary) and the channel. Jobs stay installed on the switch. */
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

    /** Receives the switch's arbitration answers for the controller's whole life. */
    private static final class Arbitration implements StreamObserver<StreamMessageResponse> {
        final CompletableFuture<MasterArbitrationUpdate> first = new CompletableFuture<>();
        volatile boolean primary;
        private volatile String lostBecause = "";

        @Override
        public void onNext(final StreamMessageResponse value) {
            if (value.hasArbitration()) {
                final MasterArbitrationUpdate u = value.getArbitration();
                synchronized (this) {
                    primary = u.getStatus().getCode() == Status.Code.OK.value();
                    if (!primary) {
                        lostBecause = ": the primary now has election id " + text(u.getElectionId());
                    }
                    notifyAll();
                }
                first.complete(u);
            }
        }

        @Override
        public void onError(final Throwable t) {
            final Status s = Status.fromThrowable(t);
            synchronized (this) {
                primary = false;
                lostBecause = ": stream closed with " + s.getCode() + " " + Objects.toString(s.getDescription(), "");
                notifyAll();
            }
            first.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            synchronized (this) {
                primary = false;
                lostBecause = ": the switch closed the stream";
                notifyAll();
            }
            first.completeExceptionally(Status.UNAVAILABLE.withDescription("stream closed by the switch").asException());
        }

        synchronized boolean awaitPrimary(final long timeoutMs) throws InterruptedException {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (!primary) {
                final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return false;
                }
                wait(left);
            }
            return true;
        }

        String lost() {
            return lostBecause;
        }
    }
}

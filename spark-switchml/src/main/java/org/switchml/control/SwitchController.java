package org.switchml.control;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Update;

/**
 * P4Runtime controller of one switch running switchml.p4: BMv2 ({@code simple_switch_grpc}) or the Java
 * software switch behind a {@code org.switchml.dataplane.p4runtime.SwitchRuntimeServer}. It arbitrates for
 * primary on a StreamChannel kept open for its whole life (a target drops a primary whose stream closed),
 * pushes the pipeline, installs and removes jobs, and reads counters. Every name is resolved through the
 * P4Info.
 *
 * <p>The work is done by one class per concern: the {@link P4RuntimeConnection} (channel, arbitration,
 * RPCs), the {@link PipelinePush}, the {@link JobInstaller} with one class per part of the program it
 * writes ({@link JobTable} with the secrets, {@link WorkerTable}, {@link ResultTable},
 * {@link MulticastGroups}; the slot pool, counter indices and groups come from the
 * {@link ResourceAllocator}), and the {@link CounterReader}. Registers are never touched (BMv2 answers
 * UNIMPLEMENTED for them).
 *
 * <p>Thread-safe: public methods that change the switch are serialised.
 */
public final class SwitchController implements AutoCloseable {
    private final P4InfoIndex p4;
    private final P4RuntimeConnection connection;
    private final TableEntries entries;
    private final PipelinePush pipeline;
    private final CounterReader counters;
    private final JobInstaller installer;

    private SwitchController(final ControllerOptions options, final P4RuntimeConnection connection) {
        this.p4 = options.p4info();
        this.connection = connection;
        this.entries = new TableEntries(p4);
        this.pipeline = new PipelinePush(p4, connection);
        this.counters = new CounterReader(p4, connection);
        this.installer = new JobInstaller(options, connection, entries, counters);
    }

    /**
     * Connects to the switch {@code options} names ({@code host:port} or {@code unix:/path}) and becomes
     * primary: opens the StreamChannel and sends a MasterArbitrationUpdate. Fails with the switch's status
     * when it refuses (e.g. INVALID_ARGUMENT: the election id is used by another live controller) or when
     * another controller with a higher election id is primary.
     */
    public static SwitchController connect(final ControllerOptions options) {
        return new SwitchController(options, P4RuntimeConnection.open(options));
    }

    /** Connects to {@code host:port} with the default options (device 0, election id 1). */
    public static SwitchController connect(final String host, final int port) {
        return connect(ControllerOptions.of(host, port));
    }

    /**
     * Connects, as {@link #connect(ControllerOptions)} does, to a P4Runtime server in this JVM served on gRPC's
     * in-process transport under {@code inProcessName} (a software switch's
     * {@code SwitchRuntimeServer.inProcessName()}): the same messages and checks as over TCP, without a socket.
     * {@code options}' address names the switch in messages (the same server's socket).
     */
    public static SwitchController connectInProcess(final String inProcessName, final ControllerOptions options) {
        return new SwitchController(options, P4RuntimeConnection.openInProcess(inProcessName, options));
    }

    /** Whether the switch last told this controller it is primary, with the stream still open. */
    public boolean isPrimary() {
        return connection.isPrimary();
    }

    /**
     * Waits, bounded, until the switch says this controller is primary again (after a controller with a
     * higher election id went away); returns whether it is.
     */
    public boolean awaitPrimary(final long timeoutMs) throws InterruptedException {
        return connection.awaitPrimary(timeoutMs);
    }

    /** The P4Info this controller pushes and resolves names with. */
    public P4InfoIndex p4info() {
        return p4;
    }

    /** The target kind of the pipeline this controller pushed, or null before {@link #setPipeline}. */
    public synchronized Target target() {
        return installer.target();
    }

    /** Slots in the pool all jobs share, as the pushed pipeline states it (0 before {@link #setPipeline}). */
    public synchronized int poolSlots() {
        return installer.capacity()[0];
    }

    /** How many jobs the pushed pipeline holds at once (0 before {@link #setPipeline}). */
    public synchronized int jobIndices() {
        return installer.capacity()[1];
    }

    /** Worker rows of the pushed pipeline, shared by all jobs' workers (0 before {@link #setPipeline}). */
    public synchronized int workerRows() {
        return installer.capacity()[2];
    }

    /** Most workers one job may have on the pushed pipeline's target (0 before {@link #setPipeline}). */
    public synchronized int maxWorkersPerJob() {
        final Target t = installer.target();
        return t == null ? 0 : t.maxWorkers();
    }

    /** The P4Runtime API version the switch implements (Capabilities RPC). */
    public String apiVersion() {
        return connection.apiVersion();
    }

    /**
     * Pushes the forwarding pipeline (SetForwardingPipelineConfig, VERIFY_AND_COMMIT): the P4Info, plus the
     * BMv2 JSON for BMv2. Committing clears the switch's forwarding state, so every job this controller
     * knew is forgotten.
     */
    public synchronized void setPipeline(final PipelineConfig config) {
        pipeline.push(config);
        installer.pipelineCommitted(config.target());
    }

    /** The switch's current pipeline (GetForwardingPipelineConfig, everything). */
    public ForwardingPipelineConfig readPipeline() {
        return pipeline.read();
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
     * otherwise the old job is removed first, and if the new shape then cannot be installed, neither stays: no
     * part of either is left registered or on the switch. What the switch refuses to delete (a failed undo) keeps
     * its resources allocated, so no later job collides with it, and is deleted by a later call
     * ({@link #leftoverJobs()}).
     *
     * @return the job as installed, with the secret its workers need
     * @throws IllegalArgumentException k ≠ 64 or more than 32 workers on BMv2, missing attachments, a non-IPv4 worker
     * @throws SwitchControlException   no free resource, a collision, or the switch refused a write
     */
    public synchronized RegisteredJob registerJob(
            final JobSpec requestedSpec, final List<WorkerAttachment> attachments, final JobResources requested) {
        return installer.register(requestedSpec, attachments, requested);
    }

    /**
     * Removes a job: its job_table entry first (traffic stops: later packets are UNKNOWN_JOB), then its
     * worker and result entries and multicast group; frees its resources. Entries already gone are fine.
     *
     * @return whether this controller had the job registered
     */
    public synchronized boolean removeJob(final int jobId) {
        return installer.remove(jobId);
    }

    /** Jobs whose entries a failed install or removal left on the switch, still to be deleted. */
    public synchronized int leftoverJobs() {
        return installer.leftovers();
    }

    /** The job as registered, or null. */
    public synchronized RegisteredJob job(final int jobId) {
        return installer.job(jobId);
    }

    /** Every job this controller has registered. */
    public synchronized List<RegisteredJob> jobs() {
        return installer.jobs();
    }

    // ------------------------------------------------------------------------------------------- counters

    /**
     * The job's counters since its registration, with the P4 program's meanings (see {@link JobCounters}):
     * switch counters are never reset, so what the job's counter cells held at registration is subtracted.
     */
    public synchronized JobCounters readJobCounters(final int jobId) {
        return installer.counters(jobId);
    }

    /** The switch-wide drop counter, cumulative since the pipeline was committed, every job included. */
    public SwitchCounters readSwitchCounters() {
        return counters.switchCounters();
    }

    /**
     * Every job's counter cells summed, since the pipeline was pushed (jobs removed since included): the switch's
     * SwitchML traffic. Reads every cell of the per-job counters; takes no lock of the controller's, so a slow
     * install does not hold it up.
     */
    public JobCounters readJobTotals() {
        return counters.jobTotals();
    }

    /** Packet counts of every cell of the counter called {@code name} (a wildcard CounterEntry read). */
    public long[] readCounter(final String name) {
        return counters.counter(name);
    }

    // ------------------------------------------------------------------------------------------- entries

    /** A table entry with every match field and action parameter given by name. */
    public TableEntry tableEntry(
            final String table, final Map<String, Long> match, final String action, final Map<String, Long> params) {
        return entries.entry(table, match, action, params);
    }

    /** Inserts a table entry (low-level; jobs use {@link #registerJob}). */
    public synchronized void insertEntry(
            final String table, final Map<String, Long> match, final String action, final Map<String, Long> params) {
        connection.write(
                List.of(TableEntries.update(Update.Type.INSERT, entries.entry(table, match, action, params))),
                "insert into " + table,
                false);
    }

    /** Deletes a table entry. */
    public synchronized void deleteEntry(final String table, final Map<String, Long> match) {
        connection.write(
                List.of(TableEntries.update(Update.Type.DELETE, entries.matchOnly(table, match))),
                "delete from " + table,
                false);
    }

    /** Writes a multicast group (INSERT, MODIFY or DELETE). */
    public synchronized void writeMulticastGroup(
            final Update.Type type, final int group, final List<MulticastReplica> replicas) {
        connection.write(
                List.of(TableEntries.update(type, MulticastGroups.group(group, replicas))),
                type + " multicast group " + group,
                false);
    }

    /** Every entry of the table called {@code name} (a wildcard read). */
    public List<TableEntry> readEntries(final String table) {
        final P4InfoIndex.Table t = p4.table(table);
        final List<TableEntry> out = new ArrayList<>();
        for (final ReadResponse r : connection.read(
                List.of(Entity.newBuilder()
                        .setTableEntry(TableEntry.newBuilder().setTableId(t.id()))
                        .build()),
                "read table " + t.name())) {
            for (final Entity e : r.getEntitiesList()) {
                out.add(e.getTableEntry());
            }
        }
        return out;
    }

    /** Every multicast group on the switch. */
    public List<MulticastGroupEntry> readMulticastGroups() {
        final List<MulticastGroupEntry> out = new ArrayList<>();
        for (final ReadResponse r : connection.read(
                List.of(Entity.newBuilder()
                        .setPacketReplicationEngineEntry(PacketReplicationEngineEntry.newBuilder()
                                .setMulticastGroupEntry(MulticastGroupEntry.newBuilder()))
                        .build()),
                "read multicast groups")) {
            for (final Entity e : r.getEntitiesList()) {
                out.add(e.getPacketReplicationEngineEntry().getMulticastGroupEntry());
            }
        }
        return out;
    }

    /** Sends a raw Write batch (escape hatch for tools and tests). Failures carry the per-update errors. */
    public synchronized void writeUpdates(final List<Update> updates) {
        connection.write(updates, "write", false);
    }

    /** Closes the stream (giving up primary) and the channel. Jobs stay installed on the switch. */
    @Override
    public synchronized void close() {
        connection.close();
    }
}

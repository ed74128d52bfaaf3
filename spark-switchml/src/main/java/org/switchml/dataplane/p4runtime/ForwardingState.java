package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.ReadResponse;
import p4.v1.P4RuntimeOuterClass.Replica;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Update;

/**
 * The forwarding state as written: table entries and multicast groups, kept as the controller wrote
 * them (in canonical form) and read back the same way. Called with the service's lock held.
 */
final class ForwardingState {
    /** Per table id: entries by decoded key. */
    private final Map<Integer, Map<List<Long>, StoredEntry>> tables = new HashMap<>();

    private final TreeMap<Integer, MulticastGroupEntry> groups = new TreeMap<>();

    /** Forgets every entry and group (a pipeline commit). */
    void clear() {
        tables.clear();
        groups.clear();
    }

    /**
     * Applies one table update; when it is a job_table or worker_table entry, records its job id in
     * {@code touched} with the update's index {@code i}, for the job's reassembly.
     */
    void applyTable(
            final P4InfoIndex p4,
            final Update.Type type,
            final TableEntry e,
            final Map<Integer, Integer> touched,
            final int i)
            throws Failure {
        final P4InfoIndex.Table t = EntryValidation.table(p4, e.getTableId());
        if (e.getIsDefaultAction()) {
            throw new Failure(
                    Status.Code.UNIMPLEMENTED, "table " + t.name() + ": the default action cannot be changed");
        }
        if (e.getPriority() != 0) {
            throw new Failure(
                    Status.Code.INVALID_ARGUMENT,
                    "table " + t.name() + " is exact-match: priority must be 0, " + "got " + e.getPriority());
        }
        final List<Long> key = EntryValidation.key(t, e);
        final Map<List<Long>, StoredEntry> rows = tables.computeIfAbsent(t.id(), x -> new LinkedHashMap<>());
        final StoredEntry old = rows.get(key);
        switch (type) {
            case INSERT -> {
                if (old != null) {
                    throw new Failure(
                            Status.Code.ALREADY_EXISTS,
                            "table " + t.name() + " already has an entry for " + EntryValidation.describeKey(t, key));
                }
                if (rows.size() >= t.size()) {
                    throw new Failure(
                            Status.Code.RESOURCE_EXHAUSTED,
                            "table " + t.name() + " is full (" + t.size() + " entries)");
                }
                rows.put(key, EntryValidation.stored(p4, t, e, key));
            }
            case MODIFY -> {
                if (old == null) {
                    throw new Failure(
                            Status.Code.NOT_FOUND,
                            "table " + t.name() + " has no entry for " + EntryValidation.describeKey(t, key));
                }
                rows.put(key, EntryValidation.stored(p4, t, e, key));
            }
            default -> {
                if (old == null) {
                    throw new Failure(
                            Status.Code.NOT_FOUND,
                            "table " + t.name() + " has no entry for " + EntryValidation.describeKey(t, key));
                }
                rows.remove(key);
            }
        }
        if (t.name().equals(P4Names.JOB_TABLE) || t.name().equals(P4Names.WORKER_TABLE)) {
            final int jobIdField = t.fields().indexOf(t.field(P4Names.F_JOB_ID));
            touched.put((int) (long) key.get(jobIdField), i);
        }
    }

    /** Applies one multicast group update (the only PRE entries switchml.p4 uses). */
    void applyGroup(final Update.Type type, final PacketReplicationEngineEntry pre) throws Failure {
        if (!pre.hasMulticastGroupEntry()) {
            throw new Failure(
                    Status.Code.UNIMPLEMENTED, "only multicast groups are supported, got " + pre.getTypeCase());
        }
        final MulticastGroupEntry g = pre.getMulticastGroupEntry();
        final int id = g.getMulticastGroupId();
        if (id == 0) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "multicast group id 0 is not valid");
        }
        final Set<String> seen = new LinkedHashSet<>();
        for (final Replica r : g.getReplicasList()) {
            if (!seen.add(r.getEgressPort() + "/" + r.getInstance())) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "multicast group " + id + ": replica (port " + r.getEgressPort() + ", instance "
                                + r.getInstance() + ") given twice");
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

    /** Adds the entries {@code query} asks for: every table's, one table's, or the one with its key. */
    void readTables(final P4InfoIndex p4, final TableEntry query, final ReadResponse.Builder resp) throws Failure {
        final Collection<P4InfoIndex.Table> which =
                query.getTableId() == 0 ? p4.tables() : List.of(EntryValidation.table(p4, query.getTableId()));
        for (final P4InfoIndex.Table t : which) {
            final Map<List<Long>, StoredEntry> rows = tables.getOrDefault(t.id(), Map.of());
            if (query.getTableId() != 0 && query.getMatchCount() > 0) {
                final StoredEntry s = rows.get(EntryValidation.key(t, query));
                if (s != null) {
                    resp.addEntities(Entity.newBuilder().setTableEntry(s.entry()));
                }
                continue;
            }
            for (final StoredEntry s : rows.values()) {
                resp.addEntities(Entity.newBuilder().setTableEntry(s.entry()));
            }
        }
    }

    /** Adds the multicast groups {@code query} asks for: all of them (id 0), or one. */
    void readGroups(final PacketReplicationEngineEntry query, final ReadResponse.Builder resp) throws Failure {
        if (!query.hasMulticastGroupEntry()) {
            throw new Failure(
                    Status.Code.UNIMPLEMENTED, "only multicast groups are supported, got " + query.getTypeCase());
        }
        final int id = query.getMulticastGroupEntry().getMulticastGroupId();
        for (final MulticastGroupEntry g : groups.values()) {
            if (id == 0 || g.getMulticastGroupId() == id) {
                resp.addEntities(Entity.newBuilder()
                        .setPacketReplicationEngineEntry(
                                PacketReplicationEngineEntry.newBuilder().setMulticastGroupEntry(g)));
            }
        }
    }

    /** The entries of the table called {@code table}, by decoded key. */
    Map<List<Long>, StoredEntry> rows(final P4InfoIndex p4, final String table) {
        return tables.getOrDefault(p4.table(table).id(), Map.of());
    }
}

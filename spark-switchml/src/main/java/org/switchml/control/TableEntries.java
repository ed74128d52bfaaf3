package org.switchml.control;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.switchml.p4info.Bytestrings;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Update;

/**
 * Table entries built from names: every match field and action parameter is given by name and resolved,
 * with its width, through the P4Info; a missing or unknown name is an error naming it.
 */
final class TableEntries {
    private final P4InfoIndex p4;

    TableEntries(final P4InfoIndex p4) {
        this.p4 = p4;
    }

    /** One entry per rank of {@code job}, made by {@code perRank} from the rank and its worker's socket. */
    static List<TableEntry> perRank(
            final RegisteredJob job, final BiFunction<Integer, InetSocketAddress, TableEntry> perRank) {
        final List<TableEntry> out = new ArrayList<>();
        for (int r = 0; r < job.spec().numWorkers(); r++) {
            out.add(perRank.apply(r, job.spec().workers().get(r)));
        }
        return out;
    }

    /** A table entry with every match field and action parameter given by name (no action when null). */
    TableEntry entry(
            final String table, final Map<String, Long> match, final String action, final Map<String, Long> params) {
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
                ab.addParams(P4RuntimeOuterClass.Action.Param.newBuilder()
                        .setParamId(f.id())
                        .setValue(Bytestrings.encode(v, f.bitwidth(), a.name() + " parameter " + f.name())));
            }
            if (!left.isEmpty()) {
                a.param(left.keySet().iterator().next()); // throws, naming the unknown parameter
            }
            b.setAction(TableAction.newBuilder().setAction(ab));
        }
        return b.build();
    }

    /** The entry's key alone (what a DELETE needs). */
    TableEntry matchOnly(final String table, final Map<String, Long> match) {
        final P4InfoIndex.Table t = p4.table(table);
        final TableEntry.Builder b = TableEntry.newBuilder().setTableId(t.id());
        final Map<String, Long> left = new HashMap<>(match);
        for (final P4InfoIndex.Field f : t.fields()) {
            final Long v = left.remove(f.name());
            if (v == null) {
                throw new IllegalArgumentException("table " + t.name() + ": match field '" + f.name() + "' missing");
            }
            b.addMatch(FieldMatch.newBuilder()
                    .setFieldId(f.id())
                    .setExact(FieldMatch.Exact.newBuilder()
                            .setValue(Bytestrings.encode(v, f.bitwidth(), t.name() + " field " + f.name()))));
        }
        if (!left.isEmpty()) {
            t.field(left.keySet().iterator().next()); // throws, naming the unknown field
        }
        return b.build();
    }

    /** An update of a table entry. */
    static Update update(final Update.Type type, final TableEntry entry) {
        return Update.newBuilder()
                .setType(type)
                .setEntity(Entity.newBuilder().setTableEntry(entry))
                .build();
    }

    /** An update of a packet replication engine entry (a multicast group). */
    static Update update(final Update.Type type, final PacketReplicationEngineEntry pre) {
        return Update.newBuilder()
                .setType(type)
                .setEntity(Entity.newBuilder().setPacketReplicationEngineEntry(pre))
                .build();
    }

    /** The IPv4 address of {@code a} as the 32-bit value the tables match and store. */
    static long ipv4(final InetSocketAddress a) {
        final byte[] b = a.getAddress().getAddress();
        return ((b[0] & 0xFFL) << 24) | ((b[1] & 0xFFL) << 16) | ((b[2] & 0xFFL) << 8) | (b[3] & 0xFFL);
    }
}

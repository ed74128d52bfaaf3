package org.switchml.dataplane.p4runtime;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.switchml.p4info.Bytestrings;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.Wire;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * Checks of a written table entry against the P4Info, and its canonical stored form: the table and
 * action exist and belong together, every match field and action parameter is given once, exact and
 * within its width, and set_job's values are ones this dataplane can run.
 */
final class EntryValidation {
    private EntryValidation() {}

    static P4InfoIndex.Table table(final P4InfoIndex p4, final int id) throws Failure {
        final P4InfoIndex.Table t = p4.tableById(id);
        if (t == null) {
            throw new Failure(Status.Code.NOT_FOUND, "table id " + id + " is not in the P4Info");
        }
        return t;
    }

    /** The key's values in the table's field order; every field exact, present once, within its width. */
    static List<Long> key(final P4InfoIndex.Table t, final TableEntry e) throws Failure {
        final Long[] values = new Long[t.fields().size()];
        for (final FieldMatch m : e.getMatchList()) {
            final P4InfoIndex.Field f = t.fieldById(m.getFieldId());
            if (f == null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT, "table " + t.name() + " has no match field id " + m.getFieldId());
            }
            final int pos = t.fields().indexOf(f);
            if (values[pos] != null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "table " + t.name() + ": match field " + f.name() + " given twice");
            }
            if (!m.hasExact()) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "table " + t.name() + ": match field " + f.name() + " is exact, got "
                                + m.getFieldMatchTypeCase());
            }
            values[pos] = decode(m.getExact().getValue(), f, "table " + t.name() + " match field " + f.name());
        }
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "table " + t.name() + ": match field "
                                + t.fields().get(i).name() + " missing");
            }
        }
        return List.of(values);
    }

    private static long decode(final ByteString bytes, final P4InfoIndex.Field f, final String what) throws Failure {
        try {
            return Bytestrings.decode(bytes, f.bitwidth(), what);
        } catch (final IllegalArgumentException x) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, x.getMessage());
        }
    }

    static String describeKey(final P4InfoIndex.Table t, final List<Long> key) {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < key.size(); i++) {
            sb.append(i == 0 ? "" : ", ")
                    .append(t.fields().get(i).name())
                    .append('=')
                    .append(Long.toUnsignedString(key.get(i)));
        }
        return sb.toString();
    }

    /** Validates the entry's action and builds its canonical stored form. */
    static StoredEntry stored(final P4InfoIndex p4, final P4InfoIndex.Table t, final TableEntry e, final List<Long> key)
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
            throw new Failure(
                    Status.Code.INVALID_ARGUMENT, "action " + a.name() + " is not an action of table " + t.name());
        }
        final Map<String, Long> params = new LinkedHashMap<>();
        final Long[] values = new Long[a.params().size()];
        for (final P4RuntimeOuterClass.Action.Param p : action.getParamsList()) {
            final P4InfoIndex.Field f = a.paramById(p.getParamId());
            if (f == null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT, "action " + a.name() + " has no parameter id " + p.getParamId());
            }
            final int pos = a.params().indexOf(f);
            if (values[pos] != null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "action " + a.name() + ": parameter " + f.name() + " given twice");
            }
            values[pos] = decode(p.getValue(), f, "action " + a.name() + " parameter " + f.name());
        }
        final P4RuntimeOuterClass.Action.Builder canon =
                P4RuntimeOuterClass.Action.newBuilder().setActionId(a.id());
        for (int i = 0; i < values.length; i++) {
            final P4InfoIndex.Field f = a.params().get(i);
            if (values[i] == null) {
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT, "action " + a.name() + ": parameter " + f.name() + " missing");
            }
            params.put(f.name(), values[i]);
            canon.addParams(P4RuntimeOuterClass.Action.Param.newBuilder()
                    .setParamId(f.id())
                    .setValue(Bytestrings.encode(values[i], f.bitwidth(), f.name())));
        }
        if (a.name().equals(P4Names.SET_JOB)) {
            checkJob(p4, t, key, params);
        }
        final TableEntry.Builder entry = TableEntry.newBuilder().setTableId(t.id());
        for (int i = 0; i < key.size(); i++) {
            final P4InfoIndex.Field f = t.fields().get(i);
            entry.addMatch(FieldMatch.newBuilder()
                    .setFieldId(f.id())
                    .setExact(FieldMatch.Exact.newBuilder()
                            .setValue(Bytestrings.encode(key.get(i), f.bitwidth(), f.name()))));
        }
        entry.setAction(TableAction.newBuilder().setAction(canon));
        return new StoredEntry(entry.build(), key, a.name(), params);
    }

    /** set_job values this dataplane can run; the P4 switch would accept them and misbehave instead. */
    private static void checkJob(
            final P4InfoIndex p4, final P4InfoIndex.Table t, final List<Long> key, final Map<String, Long> p)
            throws Failure {
        final String job = "job " + key.get(0);
        final long n = p.get(P4Names.P_NUM_WORKERS);
        final long k = p.get(P4Names.P_K);
        final long pool = p.get(P4Names.P_POOL_SIZE);
        final long index = p.get(P4Names.P_JOB_INDEX);
        final long jobs = p4.counter(P4Names.JOB_PACKETS_IN).size();
        if (n < 1 || n > Wire.MAX_WORKERS) {
            throw new Failure(
                    Status.Code.INVALID_ARGUMENT, job + ": num_workers must be 1.." + Wire.MAX_WORKERS + ", got " + n);
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
}

package org.switchml.dataplane.p4runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.p4info.Bytestrings;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.p4info.P4Names;
import p4.v1.P4RuntimeOuterClass.Action;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.TableAction;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/** A written table entry checked against switchml.p4's P4Info, and its canonical stored form. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class EntryValidationTest {
    private static final P4InfoIndex P4 = P4InfoIndex.bundled();
    private static final P4InfoIndex.Table JOBS = P4.table(P4Names.JOB_TABLE);
    private static final P4InfoIndex.Action SET_JOB = P4.action(P4Names.SET_JOB);

    /** set_job's parameters of a valid job, in P4Info order unless changed. */
    private static Map<String, Long> job() {
        final Map<String, Long> p = new LinkedHashMap<>();
        p.put(P4Names.P_GENERATION, 3L);
        p.put(P4Names.P_NUM_WORKERS, 4L);
        p.put(P4Names.P_POOL_BASE, 0L);
        p.put(P4Names.P_POOL_SIZE, 16L);
        p.put(P4Names.P_MCAST_GRP, 1L);
        p.put(P4Names.P_JOB_INDEX, 0L);
        p.put(P4Names.P_K, 64L);
        p.put(P4Names.P_SECRET, 7L);
        return p;
    }

    private static TableEntry.Builder entry(final long jobId, final Map<String, Long> params) {
        final P4InfoIndex.Field key = JOBS.field(P4Names.F_JOB_ID);
        final Action.Builder a = Action.newBuilder().setActionId(SET_JOB.id());
        // Given in reverse order: the stored form lists them in the P4Info's.
        final List<Map.Entry<String, Long>> given = List.copyOf(params.entrySet());
        for (int i = given.size() - 1; i >= 0; i--) {
            final P4InfoIndex.Field f = SET_JOB.param(given.get(i).getKey());
            a.addParams(Action.Param.newBuilder()
                    .setParamId(f.id())
                    .setValue(Bytestrings.encode(given.get(i).getValue(), f.bitwidth(), f.name())));
        }
        return TableEntry.newBuilder()
                .setTableId(JOBS.id())
                .addMatch(FieldMatch.newBuilder()
                        .setFieldId(key.id())
                        .setExact(FieldMatch.Exact.newBuilder()
                                .setValue(Bytestrings.encode(jobId, key.bitwidth(), key.name()))))
                .setAction(TableAction.newBuilder().setAction(a));
    }

    private static StoredEntry store(final TableEntry e) throws Failure {
        return EntryValidation.stored(P4, JOBS, e, EntryValidation.key(JOBS, e));
    }

    private static Status.Code refused(final TableEntry e, final String says) {
        final Failure f = assertThrows(Failure.class, () -> store(e));
        assertTrue(f.getMessage().contains(says), f.getMessage());
        return f.status.getCode();
    }

    @Test
    void aValidJobIsStoredInCanonicalForm() throws Failure {
        final StoredEntry s = store(entry(42, job()).build());
        assertEquals(List.of(42L), s.key());
        assertEquals(P4Names.SET_JOB, s.action());
        assertEquals(job(), s.params());
        // Canonical: parameters in the P4Info's order, whatever order they were given in.
        final List<Action.Param> stored = s.entry().getAction().getAction().getParamsList();
        for (int i = 0; i < stored.size(); i++) {
            assertEquals(SET_JOB.params().get(i).id(), stored.get(i).getParamId());
        }
        assertEquals("hdr.switchml.job_id=42", EntryValidation.describeKey(JOBS, s.key()));
    }

    @Test
    void malformedEntriesAreRefusedNamingWhatIsWrong() {
        final Map<String, Long> missing = job();
        missing.remove(P4Names.P_K);
        assertEquals(Status.Code.INVALID_ARGUMENT, refused(entry(1, missing).build(), "parameter k missing"));
        final TableEntry twice =
                entry(1, job()).addMatch(entry(1, job()).getMatch(0)).build();
        assertThrows(Failure.class, () -> EntryValidation.key(JOBS, twice), "a match field given twice");
        final TableEntry ternary = entry(1, job())
                .setMatch(
                        0,
                        FieldMatch.newBuilder()
                                .setFieldId(JOBS.field(P4Names.F_JOB_ID).id())
                                .setTernary(FieldMatch.Ternary.getDefaultInstance()))
                .build();
        assertThrows(Failure.class, () -> EntryValidation.key(JOBS, ternary), "not exact");
        final TableEntry noAction = entry(1, job()).clearAction().build();
        assertEquals(Status.Code.INVALID_ARGUMENT, refused(noAction, "needs a direct action"));
        final TableEntry foreign = entry(1, job())
                .setAction(TableAction.newBuilder()
                        .setAction(Action.newBuilder()
                                .setActionId(P4.action(P4Names.SET_WORKER).id())))
                .build();
        assertEquals(Status.Code.INVALID_ARGUMENT, refused(foreign, "is not an action of table"));
        final TableEntry unknown = entry(1, job())
                .setAction(
                        TableAction.newBuilder().setAction(Action.newBuilder().setActionId(123456789)))
                .build();
        assertEquals(Status.Code.NOT_FOUND, refused(unknown, "is not in the P4Info"));
        assertThrows(Failure.class, () -> EntryValidation.table(P4, 987654321), "an unknown table");
    }

    @Test
    void jobValuesThisDataplaneCannotRunAreRefused() {
        final Map<String, Long> none = job();
        none.put(P4Names.P_NUM_WORKERS, 0L);
        refused(entry(1, none).build(), "num_workers must be 1..");
        final Map<String, Long> noK = job();
        noK.put(P4Names.P_K, 0L);
        refused(entry(1, noK).build(), "k must be 1..");
        final Map<String, Long> noPool = job();
        noPool.put(P4Names.P_POOL_SIZE, 0L);
        refused(entry(1, noPool).build(), "pool_size must be >= 1");
        final Map<String, Long> index = job();
        final long jobs = P4.counter(P4Names.JOB_PACKETS_IN).size();
        index.put(P4Names.P_JOB_INDEX, jobs);
        refused(entry(1, index).build(), "job_index " + jobs + " outside");
    }
}

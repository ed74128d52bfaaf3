package org.switchml.dataplane.p4runtime;

import com.google.protobuf.Any;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.Update;
import p4.v1.P4RuntimeOuterClass.WriteRequest;

/**
 * The Write RPC's batch: each update applied to the {@link ForwardingState} on its own (CONTINUE_ON_ERROR),
 * then every job the batch touched reassembled on the dataplane, and the outcome per update. Called with
 * the service's lock held.
 */
final class Writes {
    private static final Logger LOG = Logger.getLogger(Writes.class.getName());

    private final ForwardingState forwarding;
    private final JobAssembly jobs;

    Writes(final ForwardingState forwarding, final JobAssembly jobs) {
        this.forwarding = forwarding;
        this.jobs = jobs;
    }

    /**
     * Applies the batch's updates under {@code p4} (the caller checked device, role and primary).
     *
     * @return null when every update succeeded, else the RPC's error: UNKNOWN with one p4.v1.Error per update
     * @throws Failure the batch as a whole is refused
     */
    StatusRuntimeException apply(final P4InfoIndex p4, final WriteRequest request) throws Failure {
        if (request.getAtomicity() != WriteRequest.Atomicity.CONTINUE_ON_ERROR) {
            throw new Failure(
                    Status.Code.UNIMPLEMENTED,
                    "only CONTINUE_ON_ERROR batches are supported, got " + request.getAtomicity());
        }
        final List<P4RuntimeOuterClass.Error> results = new ArrayList<>();
        boolean failed = false;
        final Map<Integer, Integer> touched = new LinkedHashMap<>(); // job id -> last update index
        for (int i = 0; i < request.getUpdatesCount(); i++) {
            try {
                apply(p4, request.getUpdates(i), touched, i);
                results.add(error(Status.Code.OK, ""));
            } catch (final Failure f) {
                results.add(error(f.status.getCode(), f.getMessage()));
                failed = true;
            }
        }
        for (final Map.Entry<Integer, Integer> t : touched.entrySet()) {
            try {
                jobs.reconcile(p4, t.getKey());
            } catch (final RuntimeException e) {
                LOG.log(Level.WARNING, "dataplane refused job " + Integer.toUnsignedString(t.getKey()), e);
                results.set(
                        t.getValue(),
                        error(
                                Status.Code.INTERNAL,
                                "the dataplane refused job " + Integer.toUnsignedString(t.getKey()) + ": "
                                        + e.getMessage()));
                failed = true;
            }
        }
        return failed ? batchError(results) : null;
    }

    private void apply(final P4InfoIndex p4, final Update u, final Map<Integer, Integer> touched, final int i)
            throws Failure {
        if (u.getType() == Update.Type.UNSPECIFIED || u.getType() == Update.Type.UNRECOGNIZED) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, "update type must be INSERT, MODIFY or DELETE");
        }
        final Entity e = u.getEntity();
        switch (e.getEntityCase()) {
            case TABLE_ENTRY -> forwarding.applyTable(p4, u.getType(), e.getTableEntry(), touched, i);
            case PACKET_REPLICATION_ENGINE_ENTRY ->
                forwarding.applyGroup(u.getType(), e.getPacketReplicationEngineEntry());
            case REGISTER_ENTRY ->
                throw new Failure(
                        Status.Code.UNIMPLEMENTED,
                        "register writes are not supported (nor on BMv2): switchml.p4 needs none");
            case COUNTER_ENTRY ->
                throw new Failure(
                        Status.Code.UNIMPLEMENTED, "counter writes are not supported: read a baseline and subtract it");
            default ->
                throw new Failure(Status.Code.UNIMPLEMENTED, "entity " + e.getEntityCase() + " is not supported");
        }
    }

    /** P4Runtime: a batch with failed updates answers UNKNOWN with one p4.v1.Error per update. */
    private static StatusRuntimeException batchError(final List<P4RuntimeOuterClass.Error> results) {
        final StringBuilder summary = new StringBuilder();
        int count = 0;
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i).getCanonicalCode() != Status.Code.OK.value()) {
                count++;
                if (summary.length() < 600) {
                    summary.append(summary.length() == 0 ? "" : "; ")
                            .append("update ")
                            .append(i)
                            .append(": ")
                            .append(Status.fromCodeValue(results.get(i).getCanonicalCode())
                                    .getCode())
                            .append(": ")
                            .append(results.get(i).getMessage());
                }
            }
        }
        final com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder()
                .setCode(Status.Code.UNKNOWN.value())
                .setMessage(count + " of " + results.size() + " updates failed: " + summary);
        for (final P4RuntimeOuterClass.Error e : results) {
            st.addDetails(Any.pack(e));
        }
        return StatusProto.toStatusRuntimeException(st.build());
    }

    private static P4RuntimeOuterClass.Error error(final Status.Code code, final String message) {
        return P4RuntimeOuterClass.Error.newBuilder()
                .setCanonicalCode(code.value())
                .setMessage(message)
                .build();
    }
}

package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import java.util.Map;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass.Entity;
import p4.v1.P4RuntimeOuterClass.ReadRequest;
import p4.v1.P4RuntimeOuterClass.ReadResponse;

/**
 * The Read RPC: table entries and multicast groups as written, counters as the P4 program would count
 * them. Registers are not readable (nor on BMv2). Called with the service's lock held.
 */
final class Reads {
    private final ForwardingState forwarding;
    private final JobAssembly jobs;
    private final CounterEmulation counters;

    Reads(final ForwardingState forwarding, final JobAssembly jobs, final CounterEmulation counters) {
        this.forwarding = forwarding;
        this.jobs = jobs;
        this.counters = counters;
    }

    /** Every entity the request asks for, under {@code p4} (the caller checked the device). */
    ReadResponse read(final P4InfoIndex p4, final ReadRequest request) throws Failure {
        final ReadResponse.Builder resp = ReadResponse.newBuilder();
        Map<String, long[]> cells = null;
        for (final Entity e : request.getEntitiesList()) {
            switch (e.getEntityCase()) {
                case TABLE_ENTRY -> forwarding.readTables(p4, e.getTableEntry(), resp);
                case PACKET_REPLICATION_ENGINE_ENTRY ->
                    forwarding.readGroups(e.getPacketReplicationEngineEntry(), resp);
                case COUNTER_ENTRY -> {
                    if (cells == null) {
                        cells = counters.cells(p4, jobs.live());
                    }
                    counters.read(p4, e.getCounterEntry(), cells, resp);
                }
                case REGISTER_ENTRY ->
                    throw new Failure(Status.Code.UNIMPLEMENTED, "register reads are not supported (nor on BMv2)");
                default ->
                    throw new Failure(Status.Code.UNIMPLEMENTED, "reading " + e.getEntityCase() + " is not supported");
            }
        }
        return resp.build();
    }
}

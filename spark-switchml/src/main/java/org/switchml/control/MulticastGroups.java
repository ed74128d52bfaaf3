package org.switchml.control;

import java.util.ArrayList;
import java.util.List;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.PacketReplicationEngineEntry;
import p4.v1.P4RuntimeOuterClass.Replica;

/**
 * The packet replication engine's multicast groups: a job's group has one replica per rank, towards the
 * rank's switch port, with instance = rank (v1model hands it to egress as egress_rid, result_table's key).
 */
final class MulticastGroups {
    private MulticastGroups() {}

    /** The job's multicast group; port 0 without attachments (the software switch). */
    static PacketReplicationEngineEntry group(final RegisteredJob job) {
        final List<MulticastReplica> replicas = new ArrayList<>();
        for (int r = 0; r < job.spec().numWorkers(); r++) {
            replicas.add(new MulticastReplica(
                    job.attachments().isEmpty() ? 0 : job.attachments().get(r).switchPort(), r));
        }
        return group(job.resources().multicastGroup(), replicas);
    }

    /** Multicast group {@code group} with {@code replicas}. */
    static PacketReplicationEngineEntry group(final int group, final List<MulticastReplica> replicas) {
        final MulticastGroupEntry.Builder g = MulticastGroupEntry.newBuilder().setMulticastGroupId(group);
        for (final MulticastReplica r : replicas) {
            g.addReplicas(Replica.newBuilder().setEgressPort(r.egressPort()).setInstance(r.instance()));
        }
        return PacketReplicationEngineEntry.newBuilder()
                .setMulticastGroupEntry(g)
                .build();
    }
}

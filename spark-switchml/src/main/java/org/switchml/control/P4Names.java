package org.switchml.control;

/**
 * Names of everything in {@code p4/switchml.p4} that the control plane reads or writes (p4/README.md,
 * "Control-plane names"). Only names live here: ids always come from the P4Info.
 */
final class P4Names {
    static final String JOB_TABLE = "SwitchMLIngress.job_table";
    static final String WORKER_TABLE = "SwitchMLIngress.worker_table";
    static final String RESULT_TABLE = "SwitchMLEgress.result_table";

    static final String F_JOB_ID = "hdr.switchml.job_id";
    static final String F_SRC_ADDR = "hdr.ipv4.src_addr";
    static final String F_SRC_PORT = "hdr.udp.src_port";
    static final String F_EGRESS_RID = "standard_metadata.egress_rid";

    static final String SET_JOB = "SwitchMLIngress.set_job";
    static final String P_GENERATION = "generation";
    static final String P_NUM_WORKERS = "num_workers";
    static final String P_POOL_BASE = "pool_base";
    static final String P_POOL_SIZE = "pool_size";
    static final String P_MCAST_GRP = "mcast_grp";
    static final String P_JOB_INDEX = "job_index";
    static final String P_K = "k";

    static final String SET_WORKER = "SwitchMLIngress.set_worker";
    static final String P_RANK = "rank";
    static final String P_BITMAP_BIT = "bitmap_bit";

    static final String SET_RESULT_DEST = "SwitchMLEgress.set_result_dest";
    static final String P_DST_MAC = "dst_mac";
    static final String P_DST_IP = "dst_ip";
    static final String P_DST_PORT = "dst_port";

    static final String DROP_REASON = "SwitchMLIngress.drop_reason";
    static final String JOB_PACKETS_IN = "SwitchMLIngress.job_packets_in";
    static final String JOB_RETRANSMISSIONS = "SwitchMLIngress.job_retransmissions";
    static final String JOB_DROPS = "SwitchMLIngress.job_drops";
    static final String JOB_PACKETS_OUT = "SwitchMLEgress.job_packets_out";

    /** Its size is the number of pool slots shared by all jobs (only the size is read, never the register). */
    static final String SLOT_OWNER = "SwitchMLIngress.aggregator.slot_owner";

    /** drop_reason index of traffic that is not SwitchML at all (P4 switch only). */
    static final int NOT_SWITCHML_INDEX = 8;

    private P4Names() {
    }
}

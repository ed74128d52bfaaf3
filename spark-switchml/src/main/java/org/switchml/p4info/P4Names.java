package org.switchml.p4info;

/**
 * Names of everything in {@code p4/switchml.p4} that the control plane reads or writes (p4/README.md,
 * "Control-plane names"). Only names live here: ids always come from the P4Info.
 */
public final class P4Names {
    public static final String JOB_TABLE = "SwitchMLIngress.job_table";
    public static final String WORKER_TABLE = "SwitchMLIngress.worker_table";
    public static final String RESULT_TABLE = "SwitchMLEgress.result_table";

    public static final String F_JOB_ID = "hdr.switchml.job_id";
    public static final String F_SRC_ADDR = "hdr.ipv4.src_addr";
    public static final String F_SRC_PORT = "hdr.udp.src_port";
    public static final String F_EGRESS_RID = "standard_metadata.egress_rid";

    public static final String SET_JOB = "SwitchMLIngress.set_job";
    public static final String P_GENERATION = "generation";
    public static final String P_NUM_WORKERS = "num_workers";
    public static final String P_POOL_BASE = "pool_base";
    public static final String P_POOL_SIZE = "pool_size";
    public static final String P_MCAST_GRP = "mcast_grp";
    public static final String P_JOB_INDEX = "job_index";
    public static final String P_K = "k";
    public static final String P_SECRET = "secret";

    public static final String SET_WORKER = "SwitchMLIngress.set_worker";
    public static final String P_RANK = "rank";
    public static final String P_BITMAP_BIT = "bitmap_bit";

    public static final String SET_RESULT_DEST = "SwitchMLEgress.set_result_dest";
    public static final String P_DST_MAC = "dst_mac";
    public static final String P_DST_IP = "dst_ip";
    public static final String P_DST_PORT = "dst_port";

    public static final String DROP_REASON = "SwitchMLIngress.drop_reason";
    public static final String JOB_PACKETS_IN = "SwitchMLIngress.job_packets_in";
    public static final String JOB_RETRANSMISSIONS = "SwitchMLIngress.job_retransmissions";
    public static final String JOB_DROPS = "SwitchMLIngress.job_drops";
    public static final String JOB_PACKETS_OUT = "SwitchMLEgress.job_packets_out";

    /** Its size is the number of pool slots shared by all jobs (only the size is read, never the register). */
    public static final String SLOT_OWNER = "SwitchMLIngress.aggregator.slot_owner";

    /**
     * drop_reason index of traffic that is not SwitchML at all (P4 switch only): right after the last
     * {@code DropReason} ordinal.
     */
    public static final int NOT_SWITCHML_INDEX = 9;

    private P4Names() {}
}

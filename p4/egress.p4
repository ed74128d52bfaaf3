/*
 * Egress: address each multicast copy of a RESULT to the worker it is for.
 * The PRE copies the packet once per worker of the job with egress_rid = rank; the
 * result_table maps (job, rank) to that worker's endpoint. RETRANSMIT_RESULT packets were
 * already addressed in ingress. Stateless apart from a counter.
 */
#ifndef _SWITCHML_EGRESS_P4_
#define _SWITCHML_EGRESS_P4_

control SwitchMLEgress(inout headers_t hdr,
                       inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) {

    // Result datagrams sent (RESULT copies and RETRANSMIT_RESULTs), per job_index.
    counter<bit<32>>(MAX_JOBS, CounterType.packets) job_packets_out;

    action set_result_dest(bit<48> dst_mac, bit<32> dst_ip, bit<16> dst_port) {
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.dst_addr = dst_ip;
        hdr.udp.dst_port = dst_port;
    }

    // One entry per (job, rank): the worker's MAC, IPv4 address and UDP port.
    table result_table {
        key = {
            hdr.switchml.job_id: exact;
            standard_metadata.egress_rid: exact;
        }
        actions = {
            set_result_dest;
            NoAction;
        }
        default_action = NoAction();
        size = 2048;   // MAX_JOBS * MAX_WORKERS
    }

    apply {
        if (hdr.switchml.isValid()) {
            if (hdr.switchml.kind == KIND_RESULT) {
                if (result_table.apply().hit) {
                    job_packets_out.count((bit<32>)meta.job_index);
                } else {
                    mark_to_drop(standard_metadata);
                }
            } else if (hdr.switchml.kind == KIND_RETRANSMIT_RESULT) {
                job_packets_out.count((bit<32>)meta.job_index);
            }
        }
    }
}

#endif  /* _SWITCHML_EGRESS_P4_ */

/*
 * Ingress: the checks of docs/protocol.md section 4 steps 1-7, the aggregation of step 8
 * (aggregate.p4), and the forwarding decision of step 9. Counters are read by the
 * controller over P4Runtime; see p4/README.md for every name and index.
 */
#ifndef _SWITCHML_INGRESS_P4_
#define _SWITCHML_INGRESS_P4_

control SwitchMLIngress(inout headers_t hdr,
                        inout metadata_t meta,
                        inout standard_metadata_t standard_metadata) {

    // Drops by reason, whole switch: index = DROP_* (headers.p4).
    counter<bit<32>>(DROP_REASONS, CounterType.packets) drop_reason;
    // Per job, indexed by the job's job_index.
    counter<bit<32>>(MAX_JOBS, CounterType.packets) job_packets_in;
    counter<bit<32>>(MAX_JOBS, CounterType.packets) job_retransmissions;
    // Per job and reason: index = job_index * JOB_DROP_STRIDE + DROP_*.
    counter<bit<32>>(MAX_JOBS * JOB_DROP_STRIDE, CounterType.packets) job_drops;

    Aggregator() aggregator;

    // k is a parameter although this program aggregates only SWITCHML_K elements: the job
    // table carries the same settings as a JobSpec on every target (the software switch takes
    // any k), and a controller error that installs another k shows up as WRONG_K.
    // secret is drawn by the controller at every registration; packets must carry it.
    action set_job(bit<16> generation, bit<16> num_workers, bit<32> pool_base,
                   bit<16> pool_size, bit<16> mcast_grp, bit<8> job_index, bit<16> k,
                   bit<32> secret) {
        meta.job_known = 1;
        meta.job_generation = generation;
        meta.num_workers = num_workers;
        meta.pool_base = pool_base;
        meta.pool_size = pool_size;
        meta.mcast_grp = mcast_grp;
        meta.job_index = job_index;
        meta.job_k = k;
        meta.job_secret = secret;
    }

    // One entry per registered job. Miss: UNKNOWN_JOB.
    table job_table {
        key = {
            hdr.switchml.job_id: exact;
        }
        actions = {
            set_job;
            NoAction;
        }
        default_action = NoAction();
        size = MAX_JOBS;
    }

    action set_worker(bit<8> rank, bit<32> bitmap_bit) {
        meta.worker_rank = rank;
        meta.worker_bit = bitmap_bit;
    }

    // One entry per (job, worker endpoint). Miss or rank mismatch: UNKNOWN_SENDER.
    table worker_table {
        key = {
            hdr.switchml.job_id: exact;
            hdr.ipv4.src_addr: exact;
            hdr.udp.src_port: exact;
        }
        actions = {
            set_worker;
            NoAction;
        }
        default_action = NoAction();
        size = 2048;   // MAX_JOBS * MAX_WORKERS
    }

    apply {
        meta.outcome = OUTCOME_DROP;
        meta.drop_code = DROP_NOT_SWITCHML;
        meta.job_known = 0;

        bool lane = hdr.udp.isValid()
                    && (hdr.udp.dst_port & SWITCHML_PORT_MASK) == SWITCHML_PORT_BASE;
        if (lane) {
            meta.drop_code = DROP_MALFORMED;
            // Step 1. 4k is computed in 32 bits so that no k can wrap around.
            bit<32> expected_udp_len = 8 + (bit<32>)SWITCHML_HEADER_BYTES;
            if (hdr.switchml.isValid()) {
                expected_udp_len = expected_udp_len + ((bit<32>)hdr.switchml.k << 2);
            }
            if (standard_metadata.parser_error != error.NoError
                    || standard_metadata.checksum_error == 1
                    || !hdr.switchml.isValid()) {
                meta.drop_code = DROP_MALFORMED;
            } else if (hdr.switchml.version != SWITCHML_VERSION
                    || hdr.switchml.kind != KIND_CONTRIBUTION
                    || (bit<32>)hdr.udp.len != expected_udp_len
                    || hdr.ipv4.total_len != hdr.udp.len + 20) {
                meta.drop_code = DROP_MALFORMED;
            } else if (!job_table.apply().hit) {
                // Step 2.
                meta.drop_code = DROP_UNKNOWN_JOB;
            } else if (hdr.switchml.secret != meta.job_secret) {
                // Step 3, before anything else of the job is consulted: a packet without the
                // secret is told apart by nothing but its job id, touches no slot and is not
                // counted in (only job_drops[BAD_SECRET] moves).
                meta.drop_code = DROP_BAD_SECRET;
            } else {
                job_packets_in.count((bit<32>)meta.job_index);
                if (hdr.switchml.generation != meta.job_generation) {
                    // Step 4.
                    meta.drop_code = DROP_STALE_GENERATION;
                } else if (!worker_table.apply().hit) {
                    // Step 5: the source endpoint is not a worker of this job.
                    meta.drop_code = DROP_UNKNOWN_SENDER;
                } else if (hdr.switchml.rank != meta.worker_rank
                        || (bit<16>)hdr.switchml.rank >= meta.num_workers || meta.worker_bit == 0) {
                    // Step 5: registered endpoint, but not for this rank, or a rank beyond the
                    // 32-bit bitmap (bitmap_bit 0: such jobs run on the software switch only).
                    meta.drop_code = DROP_UNKNOWN_SENDER;
                } else if (hdr.switchml.k != meta.job_k || hdr.switchml.k != SWITCHML_K) {
                    // Step 6: k must be the job's, and this program is built for one k.
                    meta.drop_code = DROP_WRONG_K;
                } else if (hdr.switchml.slot >= meta.pool_size
                        || meta.pool_base + (bit<32>)hdr.switchml.slot >= POOL_SLOTS) {
                    // Step 7 (the second test guards against a pool configured past the registers).
                    meta.drop_code = DROP_BAD_SLOT;
                } else {
                    // Step 8.
                    meta.pool_index = meta.pool_base + (bit<32>)hdr.switchml.slot;
                    aggregator.apply(hdr, meta);
                    if (meta.outcome == OUTCOME_RETRANSMIT
                            || (meta.outcome == OUTCOME_DROP
                                && meta.drop_code == DROP_DUPLICATE_PENDING)) {
                        job_retransmissions.count((bit<32>)meta.job_index);
                    }
                }
            }
        }

        // Step 9 and the retransmission answer. The switch's own addresses are the
        // destination addresses of the contribution; the result leaves from the lane port
        // the contribution was sent to.
        if (meta.outcome == OUTCOME_RESULT) {
            hdr.switchml.kind = KIND_RESULT;        // rank stays: the completing rank
            hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
            hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
            hdr.udp.src_port = hdr.udp.dst_port;
            hdr.udp.checksum = 0;
            // Destinations per copy: SwitchMLEgress.result_table, keyed by egress_rid = rank.
            standard_metadata.mcast_grp = meta.mcast_grp;
        } else if (meta.outcome == OUTCOME_RETRANSMIT) {
            hdr.switchml.kind = KIND_RETRANSMIT_RESULT;   // rank stays: the requester
            bit<48> mac = hdr.ethernet.src_addr;
            hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
            hdr.ethernet.dst_addr = mac;
            bit<32> addr = hdr.ipv4.src_addr;
            hdr.ipv4.src_addr = hdr.ipv4.dst_addr;
            hdr.ipv4.dst_addr = addr;
            bit<16> port = hdr.udp.src_port;
            hdr.udp.src_port = hdr.udp.dst_port;
            hdr.udp.dst_port = port;
            hdr.udp.checksum = 0;
            standard_metadata.egress_spec = standard_metadata.ingress_port;
        } else {
            if (meta.outcome == OUTCOME_DROP) {
                drop_reason.count((bit<32>)meta.drop_code);
                if (meta.job_known == 1) {
                    job_drops.count((bit<32>)meta.job_index * JOB_DROP_STRIDE
                                    + (bit<32>)meta.drop_code);
                }
            }
            mark_to_drop(standard_metadata);
        }
    }
}

#endif  /* _SWITCHML_INGRESS_P4_ */

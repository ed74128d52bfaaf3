/*
 * spark-switchml P4 dataplane (BMv2 v1model): types, constants, headers, metadata.
 * Wire format: docs/protocol.md, section 2. All fields big-endian, as on the wire.
 */
#ifndef _SWITCHML_HEADERS_P4_
#define _SWITCHML_HEADERS_P4_

/* ---------------------------------------------------------------- sizing */

// Elements per packet. The program is built for k = 64 (256-byte payload).
#define SWITCHML_K 64
// Slots shared by all jobs; a job owns [pool_base, pool_base + pool_size).
// Each slot has two sets (shadow copies), and each set k sums.
#define POOL_SLOTS 2048
#define POOL_SETS  4096          // POOL_SLOTS * 2
#define POOL_SUMS  262144        // POOL_SETS * SWITCHML_K
// Jobs installed at once; job_index (0..MAX_JOBS-1) selects per-job counters.
#define MAX_JOBS 64
#define MAX_WORKERS 32

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_UDP    = 17;

// UDP destination ports 0xBEE0..0xBEEF are SwitchML (one lane here).
const bit<16> SWITCHML_PORT_BASE = 0xBEE0;
const bit<16> SWITCHML_PORT_MASK = 0xFFF0;

const bit<4>  SWITCHML_VERSION = 1;
const bit<4>  KIND_CONTRIBUTION      = 1;
const bit<4>  KIND_RESULT            = 2;
const bit<4>  KIND_RETRANSMIT_RESULT = 3;

const bit<16> SWITCHML_HEADER_BYTES = 24;
// 8 (UDP) + 24 (SwitchML) + 4k: the only UDP length for which the payload is parsed.
const bit<16> SWITCHML_UDP_LEN = 288;

// Exponent NONE (-32768). XOR with this bit maps int16 order onto bit<16> order.
const bit<16> EXPONENT_SIGN = 0x8000;

/* ------------------------------------------------ drop reasons (indices) */
// Index of the drop_reason counter; 0..8 equal org.switchml.protocol.DropReason ordinals
// (new reasons are appended there, so existing indices never move).
const bit<8> DROP_MALFORMED         = 0;
const bit<8> DROP_UNKNOWN_JOB       = 1;
const bit<8> DROP_STALE_GENERATION  = 2;
const bit<8> DROP_UNKNOWN_SENDER    = 3;
const bit<8> DROP_WRONG_K           = 4;
const bit<8> DROP_BAD_SLOT          = 5;
const bit<8> DROP_STALE_SEQ         = 6;
const bit<8> DROP_DUPLICATE_PENDING = 7;
const bit<8> DROP_BAD_SECRET        = 8;
const bit<8> DROP_NOT_SWITCHML      = 9;   // P4 only: any other traffic
#define DROP_REASONS 10
// job_drops is indexed job_index * JOB_DROP_STRIDE + reason (room for reasons added later).
#define JOB_DROP_STRIDE 16

/* ------------------------------------------------ what ingress decided */
const bit<2> OUTCOME_DROP       = 0;   // dropped, meta.drop_code says why
const bit<2> OUTCOME_CONSUMED   = 1;   // contribution absorbed, nothing to send
const bit<2> OUTCOME_RESULT     = 2;   // slot completed: multicast RESULT
const bit<2> OUTCOME_RETRANSMIT = 3;   // unicast RETRANSMIT_RESULT to the sender

/* ---------------------------------------------------------------- headers */

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

// 24 bytes; docs/protocol.md section 2.
header switchml_h {
    bit<4>  version;
    bit<4>  kind;
    bit<1>  set_id;        // shadow-set bit of the slot
    bit<3>  reserved0;
    bit<4>  enc;           // echoed, never interpreted
    bit<16> k;
    bit<32> job_id;
    bit<16> generation;
    bit<8>  rank;
    bit<8>  reserved1;
    bit<16> slot;
    bit<16> exponent;      // int16, 0x8000 = NONE
    bit<32> seq;
    bit<32> secret;        // the job's secret: without it a packet touches nothing of the job
}

// switchml_payload_h (SWITCHML_K x bit<32>) and the unrolled per-element macros.
#include "payload.p4"

struct headers_t {
    ethernet_h         ethernet;
    ipv4_h             ipv4;
    udp_h              udp;
    switchml_h         switchml;
    switchml_payload_h payload;
}

struct metadata_t {
    bit<2>  outcome;
    bit<8>  drop_code;
    bit<1>  job_known;       // job_table hit: per-job counters apply
    // from job_table
    bit<16> job_generation;
    bit<16> num_workers;     // up to 256 in the table; this program aggregates up to 32
    bit<32> pool_base;
    bit<16> pool_size;
    bit<16> mcast_grp;
    bit<8>  job_index;
    bit<16> job_k;           // elements per packet registered for the job
    bit<32> job_secret;      // the registration's secret
    // from worker_table
    bit<8>  worker_rank;
    bit<32> worker_bit;      // 1 << rank
    // slot addressing
    bit<32> pool_index;      // pool_base + slot
}

#endif  /* _SWITCHML_HEADERS_P4_ */

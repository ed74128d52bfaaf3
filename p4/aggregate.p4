/*
 * Slot state and the per-contribution algorithm of docs/protocol.md section 4, step 8.
 * Applied only to a contribution that passed every check of steps 1-7.
 *
 * State lives in registers indexed by set index = pool_index * 2 + set; the sums of a
 * set are SWITCHML_K consecutive entries of set_sum starting at set_index * SWITCHML_K.
 * All register read-modify-writes happen here, in ingress: simple_switch runs ingress
 * in a single thread, so one packet's updates never interleave with another's.
 *
 * Sets out: meta.outcome (and meta.drop_code), hdr.switchml.exponent and hdr.payload
 * (the result to send, for OUTCOME_RESULT and OUTCOME_RETRANSMIT).
 */
#ifndef _SWITCHML_AGGREGATE_P4_
#define _SWITCHML_AGGREGATE_P4_

control Aggregator(inout headers_t hdr, inout metadata_t meta) {
    // (job id ++ generation ++ secret): the registration that last used the slot. A different
    // owner means the slot belongs to a new job or a new registration (a new attempt, or a new
    // session of the same attempt: each registration has its own secret): both sets start
    // afresh. This is how the dataplane resets itself; BMv2's P4Runtime cannot read or write
    // registers.
    register<bit<80>, bit<32>>(POOL_SLOTS) slot_owner;
    register<bit<32>, bit<32>>(POOL_SETS) set_bitmap;     // bit r = rank r contributed
    register<bit<8>,  bit<32>>(POOL_SETS) set_count;      // contributors so far
    register<bit<32>, bit<32>>(POOL_SETS) set_seq;        // seq of the current use
    register<bit<1>,  bit<32>>(POOL_SETS) set_used;       // used in this generation
    register<bit<16>, bit<32>>(POOL_SETS) set_exponent;   // max exponent (int16)
    register<bit<32>, bit<32>>(POOL_SUMS) set_sum;        // element sums, mod 2^32

    apply {
        bit<32> idx = (meta.pool_index << 1) | (bit<32>)hdr.switchml.set_id;
        bit<32> other = idx ^ 32w1;
        bit<32> sum_base = idx * SWITCHML_K;
        bit<80> owner_now = hdr.switchml.job_id ++ hdr.switchml.generation ++ hdr.switchml.secret;
        bit<80> owner = 0;
        bit<32> bitmap = 0;
        bit<32> bitmap_other = 0;
        bit<8>  count = 0;
        bit<32> seq = 0;
        bit<1>  used = 0;
        bit<16> exponent = 0;
        bit<32> tmp = 0;
        bit<32> b = meta.worker_bit;
        bit<32> q = hdr.switchml.seq;

        slot_owner.read(owner, meta.pool_index);
        if (owner != owner_now) {
            // Lazy reset: forget both sets of the previous owner.
            slot_owner.write(meta.pool_index, owner_now);
            set_bitmap.write(other, 0);
            set_count.write(other, 0);
            set_used.write(other, 0);
            // idx itself is rewritten below by the fresh-use branch (bitmap 0, used 0).
        } else {
            set_bitmap.read(bitmap, idx);
            set_bitmap.read(bitmap_other, other);
            set_count.read(count, idx);
            set_seq.read(seq, idx);
            set_used.read(used, idx);
            set_exponent.read(exponent, idx);
        }

        bit<32> age = q - seq;   // (int32)(q - seq) <= 0  <=>  age == 0 or its sign bit set

        if (bitmap == 0) {
            if (used == 1 && (age == 0 || age[31:31] == 1)) {
                // A delayed packet of a use that is over.
                meta.outcome = OUTCOME_DROP;
                meta.drop_code = DROP_STALE_SEQ;
            } else {
                // Fresh use: the first contributor overwrites the set.
                set_bitmap.write(idx, b);
                set_bitmap.write(other, bitmap_other & ~b);
                set_count.write(idx, 1);
                set_seq.write(idx, q);
                set_used.write(idx, 1);
                set_exponent.write(idx, hdr.switchml.exponent);
                SUMS_STORE(set_sum, sum_base, hdr.payload);
                // Packet exponent and payload already equal the stored result.
                if (meta.num_workers == 1) {
                    meta.outcome = OUTCOME_RESULT;
                } else {
                    meta.outcome = OUTCOME_CONSUMED;
                }
            }
        } else if (q != seq) {
            // Same slot and set, different use: stale.
            meta.outcome = OUTCOME_DROP;
            meta.drop_code = DROP_STALE_SEQ;
        } else if ((bitmap & b) == 0 && (bit<16>)count == meta.num_workers) {
            // Late copy of a finished use: the sender's bit was cleared when it moved on to
            // the other set, so it already has the result. Adding it would corrupt the sums.
            meta.outcome = OUTCOME_DROP;
            meta.drop_code = DROP_STALE_SEQ;
        } else if ((bitmap & b) == 0) {
            // New contributor (count < n): add; the packet becomes the running result.
            set_bitmap.write(idx, bitmap | b);
            set_bitmap.write(other, bitmap_other & ~b);
            count = count + 1;
            set_count.write(idx, count);
            // Signed max: XOR with the sign bit turns int16 order into bit<16> order,
            // so NONE (0x8000) is the smallest value.
            if ((exponent ^ EXPONENT_SIGN) > (hdr.switchml.exponent ^ EXPONENT_SIGN)) {
                hdr.switchml.exponent = exponent;
            }
            set_exponent.write(idx, hdr.switchml.exponent);
            SUMS_ADD(set_sum, sum_base, hdr.payload, tmp);
            if ((bit<16>)count == meta.num_workers) {
                meta.outcome = OUTCOME_RESULT;
            } else {
                meta.outcome = OUTCOME_CONSUMED;
            }
        } else {
            // Retransmission: answer with the stored result once the set is complete.
            if ((bit<16>)count == meta.num_workers) {
                hdr.switchml.exponent = exponent;
                SUMS_LOAD(set_sum, sum_base, hdr.payload);
                meta.outcome = OUTCOME_RETRANSMIT;
            } else {
                meta.outcome = OUTCOME_DROP;
                meta.drop_code = DROP_DUPLICATE_PENDING;
            }
        }
    }
}

#endif  /* _SWITCHML_AGGREGATE_P4_ */

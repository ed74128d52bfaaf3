package org.switchml.protocol;

/** Why a switch dropped a datagram (docs/protocol.md, section 4). The ordinal is the counter index. */
public enum DropReason {
    /** Short datagram, wrong version or kind, or length not 20 + 4k. Counted per switch. */
    MALFORMED,
    /** No job with this id. Counted per switch. */
    UNKNOWN_JOB,
    /** Generation differs from the job's: a packet of an aborted attempt. */
    STALE_GENERATION,
    /** Rank out of range, or the source address is not the one registered for the rank. */
    UNKNOWN_SENDER,
    /** k differs from the job's k. */
    WRONG_K,
    /** Slot outside the job's pool, or (software switch) sent to the wrong lane. */
    BAD_SLOT,
    /** A delayed packet of a slot use that is over. */
    STALE_SEQ,
    /** A retransmission for a slot that is still filling. */
    DUPLICATE_PENDING
}

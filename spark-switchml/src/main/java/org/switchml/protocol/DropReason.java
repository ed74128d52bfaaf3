package org.switchml.protocol;

/**
 * Why a switch dropped a datagram (docs/protocol.md, section 4). The ordinal is the counter index (the P4
 * program's {@code drop_reason} index), so new reasons are only ever appended.
 */
public enum DropReason {
    /** Short datagram, wrong version or kind, or length not 24 + 4k. Counted per switch. */
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
    DUPLICATE_PENDING,
    /**
     * The packet names a known job but does not carry its secret: a forged packet, or one of a session
     * whose registration was replaced. Checked right after the job lookup, so such a packet touches nothing
     * else of the job. Counted per job.
     */
    BAD_SECRET
}

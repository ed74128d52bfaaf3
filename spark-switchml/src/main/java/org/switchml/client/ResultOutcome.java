package org.switchml.client;

/** What a worker socket did with one datagram it received (docs/protocol.md, section 3, receive rule). */
enum ResultOutcome {
    /** It completed an outstanding packet. */
    ACCEPTED,
    /** Not from the switch's address and the port of the lane the slot belongs to. */
    UNKNOWN_SENDER,
    /** From the switch, but without the job's secret: another registration of the job. */
    BAD_SECRET,
    /** From the switch with the job's secret, but of another generation. */
    OTHER_GENERATION,
    /** Anything else: not a result, no call of its job running, or no outstanding packet it answers. */
    IGNORED
}

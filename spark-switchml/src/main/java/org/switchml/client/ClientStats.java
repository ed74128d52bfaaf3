package org.switchml.client;

/**
 * What one worker's socket saw so far. A result counts as accepted only when it passes every check of
 * docs/protocol.md, section 3 (receive rule); the last three counts are parts of {@code resultsIgnored}.
 *
 * @param packetsSent              contributions sent, retransmissions included
 * @param retransmissions          contributions sent again: after a timeout, or presumed lost because
 *                                 packets sent after them were answered
 * @param lossDetected             the retransmissions of the second kind (no timeout involved)
 * @param resultsAccepted          results that completed an outstanding packet
 * @param resultsIgnored           datagrams dropped: duplicate, stale, malformed, foreign or that could not
 *                                 be checked, and those below
 * @param resultsFromUnknownSender results of a running call that did not come from the switch's address and
 *                                 the port of the lane their slot belongs to
 * @param resultsWithBadSecret     results from the switch without the job's secret (another registration)
 * @param resultsOfOtherGeneration results from the switch with the job's secret but of another generation
 */
public record ClientStats(
        long packetsSent,
        long retransmissions,
        long lossDetected,
        long resultsAccepted,
        long resultsIgnored,
        long resultsFromUnknownSender,
        long resultsWithBadSecret,
        long resultsOfOtherGeneration) {}

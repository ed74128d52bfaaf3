package org.switchml.client;

/**
 * What one worker's socket saw so far.
 *
 * @param packetsSent     contributions sent, retransmissions included
 * @param retransmissions contributions sent again: after a timeout, or presumed lost because packets sent
 *                        after them were answered
 * @param lossDetected    the retransmissions of the second kind (no timeout involved)
 * @param resultsAccepted results that completed an outstanding packet
 * @param resultsIgnored  results dropped as duplicate, stale or foreign
 */
public record ClientStats(long packetsSent, long retransmissions, long lossDetected, long resultsAccepted,
                          long resultsIgnored) {
}

package org.switchml.service;

import org.switchml.protocol.SwitchAddress;

/**
 * What a job service tells its clients about its switch.
 *
 * @param dataplane  where workers send their packets (one UDP port per lane)
 * @param requiredK  the only k the switch accepts, 0 when any k fits
 * @param mtu        MTU of the dataplane's interface when known, else 0
 * @param countsJobs whether every job's counters can be read
 * @param poolSlots  slots of the pool all jobs share
 * @param jobIndices jobs the switch holds at once
 * @param maxWorkers most workers one job may have ({@link org.switchml.protocol.Wire#MAX_WORKERS} on the
 *                   software switch, {@link org.switchml.protocol.Wire#P4_MAX_WORKERS} on the P4 program)
 */
public record SwitchDescription(
        SwitchAddress dataplane,
        int requiredK,
        int mtu,
        boolean countsJobs,
        int poolSlots,
        int jobIndices,
        int maxWorkers) {

    /** The same description with at most {@code n} workers per job. */
    public SwitchDescription withMaxWorkers(final int n) {
        return new SwitchDescription(dataplane, requiredK, mtu, countsJobs, poolSlots, jobIndices, n);
    }
}

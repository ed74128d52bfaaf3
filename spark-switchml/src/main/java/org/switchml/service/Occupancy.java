package org.switchml.service;

/**
 * How full a shared switch is, as its job service sees it; carries no job's secret or workers.
 *
 * @param sessions          applications with a live session
 * @param jobs              jobs installed
 * @param slotsHeld         pool slots those jobs hold
 * @param poolSlots         pool slots of the switch
 * @param requestsWaiting   job requests waiting for room
 * @param admissionsRefused job requests refused because the switch stayed full for their whole wait
 * @param leasesExpired     sessions removed because their lease lapsed
 */
public record Occupancy(int sessions, int jobs, int slotsHeld, int poolSlots, int requestsWaiting,
                        long admissionsRefused, long leasesExpired) {
}

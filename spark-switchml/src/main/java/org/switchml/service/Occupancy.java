package org.switchml.service;

/**
 * How full a shared switch is, as its job service sees it; carries no job's secret or workers and names no
 * session.
 *
 * @param sessions          applications with a live session
 * @param jobs              jobs installed
 * @param slotsHeld         pool slots jobs hold (those being installed or removed included)
 * @param poolSlots         pool slots of the switch
 * @param requestsWaiting   job requests waiting for room
 * @param admissionsRefused job requests refused because the switch stayed full for their whole wait
 * @param leasesExpired     sessions removed because their lease lapsed
 * @param quotaRefusals     requests refused at once because they were over a quota
 * @param workersHeld       worker rows jobs hold
 * @param bytesHeld         bytes of switch state jobs hold ({@link Quotas#jobBytes})
 */
public record Occupancy(
        int sessions,
        int jobs,
        int slotsHeld,
        int poolSlots,
        int requestsWaiting,
        long admissionsRefused,
        long leasesExpired,
        long quotaRefusals,
        int workersHeld,
        long bytesHeld) {}

package org.switchml.dataplane;

/**
 * Counters of a switch that belong to no job.
 *
 * @param malformed  datagrams dropped as MALFORMED
 * @param unknownJob datagrams dropped as UNKNOWN_JOB
 * @param errors     packets whose handling raised (a bug; the dataplane keeps serving)
 */
public record SwitchCounters(long malformed, long unknownJob, long errors) {
}

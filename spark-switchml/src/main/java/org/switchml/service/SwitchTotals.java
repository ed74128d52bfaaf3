package org.switchml.service;

import org.switchml.protocol.JobCounters;
import org.switchml.protocol.SwitchCounters;

/**
 * A switch's traffic as its job service reports it to any authenticated client: no job's own counters.
 *
 * @param jobs     every job's counter cells summed, since the pipeline was pushed
 * @param switchWide the switch-wide drops (packets no job owns) and non-SwitchML frames
 */
public record SwitchTotals(JobCounters jobs, SwitchCounters switchWide) {}

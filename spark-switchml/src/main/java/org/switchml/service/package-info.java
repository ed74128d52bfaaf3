/**
 * The job service of a shared switch: one controller owns the switch for its whole life, and applications
 * ask it for jobs over gRPC ({@code switchml/jobs/v1/jobs.proto}). It keeps one session per application with
 * a lease, gives each session its own range of job ids, installs jobs in FIFO order when the switch is full
 * (up to a bound), removes a session's jobs when it closes or its lease lapses, and shows a job's secret and
 * counters to its own session only. {@link org.switchml.service.JobServiceClient} is the applications' side.
 */
package org.switchml.service;

/**
 * The job service of a shared switch: one controller owns the switch for its whole life, and applications
 * ask it for jobs over gRPC ({@code switchml/jobs/v1/jobs.proto}). It keeps one session per application with
 * a lease, gives each session its own range of job ids, holds every tenant (application token), session and job
 * to its {@link org.switchml.service.Quotas}, admits what fits when the switch is full without letting a large
 * request wait forever (up to a bound), removes a session's jobs when it closes or its lease lapses, and shows a
 * job's secret and counters to its own session only. {@link org.switchml.service.JobServiceClient} and
 * {@link org.switchml.service.LeasedSession} are the applications' side.
 */
package org.switchml.service;

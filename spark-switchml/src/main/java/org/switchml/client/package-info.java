/**
 * The worker side: {@link org.switchml.client.SwitchMLClient} owns one UDP socket, and a
 * {@link org.switchml.client.JobSession} streams a vector through a job's slot pool with a window,
 * retransmission and bounded waits, returning the same sum on every worker. Uses protocol and transport;
 * never the switch nor Spark.
 */
package org.switchml.client;

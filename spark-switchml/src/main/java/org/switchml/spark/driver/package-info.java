/**
 * The driver's side: the link to the switch's registrar (reconnecting while it is unreachable), the book of
 * switch jobs, the rendezvous and plan of each barrier stage, the launch and retry of stages, and progress
 * reports. Uses config, rpc, registrar and executor (a local master's driver JVM is its own executor).
 */
package org.switchml.spark.driver;

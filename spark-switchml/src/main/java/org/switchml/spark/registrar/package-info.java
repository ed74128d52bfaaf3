/**
 * How the driver installs and removes jobs on a switch: the {@link org.switchml.spark.registrar.JobRegistrar}
 * interface, the embedded software switch with its controller, and an external switch through its P4Runtime
 * server. Uses the control plane and the dataplane; knows neither the driver's planning nor the executors.
 */
package org.switchml.spark.registrar;

/**
 * A software switch with everything that owns it: its P4Runtime server, the controller that holds the primary role,
 * and the job service in front of them, built in one place and closed as one. The standalone switch
 * ({@code bin/switchml-switch}) and the switch embedded in a Spark driver are both such a stack. Uses the dataplane,
 * its P4Runtime server, the controller and the service; knows nothing of Spark.
 */
package org.switchml.service.stack;

/**
 * The software switch's own P4Runtime server and its command line ({@code bin/switchml-switch}): the same
 * table entries, multicast groups and counters that the P4 program exposes, so one controller programs
 * both targets. Uses dataplane, p4info and gRPC.
 */
package org.switchml.dataplane.p4runtime;

package org.switchml.control;

/**
 * One copy of a multicast group: the egress port it leaves by and its instance ({@code egress_rid} in
 * v1model, which switchml.p4 uses as the rank).
 */
public record MulticastReplica(int egressPort, int instance) {}

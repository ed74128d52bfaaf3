/**
 * The names and ids of the P4 program's tables, actions, counters and multicast groups, read from its
 * bundled P4Info, shared by the controller and the software switch's P4Runtime server. Knows neither side.
 */
package org.switchml.p4info;

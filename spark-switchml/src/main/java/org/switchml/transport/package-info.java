/**
 * Datagram I/O on Netty channels for both ends of the protocol: opening UDP channels, sending with an
 * optional fault plan (loss, duplication, reordering) for tests and benchmarks. Knows only the protocol.
 */
package org.switchml.transport;

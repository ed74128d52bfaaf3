package org.switchml.spark.messages;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import org.switchml.protocol.Wire;

/**
 * The text form of a worker socket in the messages between driver and executors ({@code ip:port}), and
 * the path facts that travel with it: the MTU of the interface a socket is bound to, and the largest k
 * that fits it.
 */
public final class Endpoints {
    private Endpoints() {}

    /** {@code ip:port} of {@code a}. */
    public static String endpoint(final InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** The socket address {@link #endpoint} wrote. */
    public static InetSocketAddress parseEndpoint(final String s) {
        final int c = s.lastIndexOf(':');
        return new InetSocketAddress(s.substring(0, c), Integer.parseInt(s.substring(c + 1)));
    }

    /** MTU of the interface that has {@code host}'s address (0 when unknown). */
    public static int mtuOf(final String host) {
        try {
            final NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(host));
            return nif == null ? 0 : Math.max(0, nif.getMTU());
        } catch (final IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Largest k whose datagram fits {@code mtu} unfragmented (IPv4 20 + UDP 8 + header + 4k). */
    public static int kForMtu(final int mtu) {
        return (mtu - 28 - Wire.HEADER_LENGTH) / 4;
    }
}

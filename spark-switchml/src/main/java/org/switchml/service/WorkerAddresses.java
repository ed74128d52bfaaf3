package org.switchml.service;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.switchml.protocol.SwitchAddress;

/**
 * Which worker endpoints a switch takes: unicast IPv4 addresses, given as literals (the switch resolves no
 * names), other than the switch's own dataplane sockets. The switch sends each result to every worker of the
 * job, so a worker that is a multicast, broadcast or unspecified address, or the switch itself, would send
 * results where no worker is (or loop them back into the switch).
 */
final class WorkerAddresses {
    private final Set<InetSocketAddress> own = new HashSet<>();
    private final Set<Integer> lanePorts;
    private final Set<InetAddress> broadcasts = new HashSet<>();
    private boolean wildcard;

    /** Learns the switch's own addresses from its dataplane address (the operator's setting, resolved once). */
    WorkerAddresses(final SwitchAddress dataplane) {
        this.lanePorts = Set.copyOf(dataplane.lanePorts());
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(dataplane.host());
        } catch (final UnknownHostException e) {
            addresses = new InetAddress[0];
        }
        for (final InetAddress a : addresses) {
            wildcard |= a.isAnyLocalAddress();
            for (final int p : dataplane.lanePorts()) {
                own.add(new InetSocketAddress(a, p));
            }
            try {
                final NetworkInterface nif = NetworkInterface.getByInetAddress(a);
                if (nif != null) {
                    for (final InterfaceAddress ia : nif.getInterfaceAddresses()) {
                        if (ia.getBroadcast() != null) {
                            broadcasts.add(ia.getBroadcast());
                        }
                    }
                }
            } catch (final SocketException ignored) {
                // No interface to ask: the limited broadcast address is still refused below.
            }
        }
    }

    /**
     * An IPv4 address written as a literal ({@code a.b.c.d}, decimal, no leading zeros); never a name.
     *
     * @throws IllegalArgumentException anything else, saying so
     */
    static InetAddress ipv4Literal(final String text) {
        final String[] parts = text == null ? new String[0] : text.split("\\.", -1);
        final byte[] b = new byte[4];
        boolean ok = parts.length == 4;
        for (int i = 0; ok && i < 4; i++) {
            final String p = parts[i];
            ok = !p.isEmpty()
                    && p.length() <= 3
                    && p.chars().allMatch(c -> c >= '0' && c <= '9')
                    && (p.length() == 1 || p.charAt(0) != '0')
                    && Integer.parseInt(p) <= 255;
            if (ok) {
                b[i] = (byte) Integer.parseInt(p);
            }
        }
        if (!ok) {
            final String shown = text == null ? "(none)" : text.length() > 64 ? text.substring(0, 64) + "..." : text;
            throw new IllegalArgumentException("'" + shown.replaceAll("\\p{Cc}", "?") + "' is not an IPv4 address "
                    + "literal: the switch resolves no names (the driver sends each worker's IPv4 address)");
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException(e); // four bytes are always an address
        }
    }

    /** Why {@code w} cannot be a worker of a job, or null when it can. */
    String refusal(final InetSocketAddress w) {
        final InetAddress a = w.getAddress();
        if (!(a instanceof Inet4Address)) {
            return "is not an IPv4 address (the switch matches IPv4 sources)";
        }
        final int first = a.getAddress()[0] & 0xFF;
        if (first == 0) {
            return "is the unspecified address or in 0.0.0.0/8, which no host sends from";
        }
        if (a.isMulticastAddress()) {
            return "is a multicast address";
        }
        if (first >= 240) {
            return "is the broadcast address or in the reserved 240.0.0.0/4";
        }
        if (broadcasts.contains(a)) {
            return "is the broadcast address of the switch's network";
        }
        if (own.contains(w) || (wildcard && lanePorts.contains(w.getPort()) && isLocal(a))) {
            return "is one of the switch's own dataplane sockets";
        }
        return null;
    }

    /** The first refusal among {@code workers}, naming the rank, or null. */
    String refusal(final List<InetSocketAddress> workers) {
        for (int r = 0; r < workers.size(); r++) {
            final String why = refusal(workers.get(r));
            if (why != null) {
                return "rank " + r + "'s address " + workers.get(r).getAddress().getHostAddress() + ":"
                        + workers.get(r).getPort() + " " + why;
            }
        }
        return null;
    }

    private static boolean isLocal(final InetAddress a) {
        try {
            return a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (final SocketException e) {
            return false;
        }
    }
}

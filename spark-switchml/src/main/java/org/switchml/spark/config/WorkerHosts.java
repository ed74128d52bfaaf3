package org.switchml.spark.config;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Resolves {@code spark.switchml.worker.host} on an executor: a subnet {@code a.b.c.d/len} names the
 * executor's own interface address in it (each executor finds its own), anything else is used as given.
 */
public final class WorkerHosts {
    private WorkerHosts() {
    }

    /** {network, mask} of {@code a.b.c.d/len}. */
    public static int[] parseSubnet(final String text) {
        final int slash = text.indexOf('/');
        final String addr = text.substring(0, slash);
        final int len;
        try {
            len = Integer.parseInt(text.substring(slash + 1));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("bad prefix length in subnet '" + text + "'", e);
        }
        if (len < 0 || len > 32 || !addr.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new IllegalArgumentException("want an IPv4 subnet a.b.c.d/len, got '" + text + "'");
        }
        final int ip;
        try {
            ip = toInt(InetAddress.getByName(addr)); // a literal: no lookup
        } catch (final UnknownHostException e) {
            throw new IllegalArgumentException("want an IPv4 subnet a.b.c.d/len, got '" + text + "'", e);
        }
        final int mask = len == 0 ? 0 : -1 << (32 - len);
        return new int[] {ip & mask, mask};
    }

    private static int toInt(final InetAddress a) {
        final byte[] b = a.getAddress();
        return ((b[0] & 0xFF) << 24) | ((b[1] & 0xFF) << 16) | ((b[2] & 0xFF) << 8) | (b[3] & 0xFF);
    }

    /**
     * The address to bind for {@code setting}: a subnet becomes the first address of an interface that is up
     * inside it (an error naming the interfaces seen when there is none); anything else is returned as is.
     */
    public static String resolve(final String setting) {
        if (!setting.contains("/")) {
            return setting;
        }
        final int[] net = parseSubnet(setting);
        final List<String> seen = new ArrayList<>();
        try {
            for (final NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nif.isUp()) {
                    continue;
                }
                for (final InterfaceAddress ia : nif.getInterfaceAddresses()) {
                    if (ia.getAddress() instanceof Inet4Address v4) {
                        seen.add(nif.getName() + " " + v4.getHostAddress());
                        if ((toInt(v4) & net[1]) == net[0]) {
                            return v4.getHostAddress();
                        }
                    }
                }
            }
        } catch (final SocketException e) {
            throw new IllegalStateException("cannot list the network interfaces: " + e.getMessage(), e);
        }
        throw new IllegalStateException(SwitchMLConfig.WORKER_HOST.key() + "=" + setting
                + ": no interface of this host has an address in it (up: " + seen + ")");
    }
}

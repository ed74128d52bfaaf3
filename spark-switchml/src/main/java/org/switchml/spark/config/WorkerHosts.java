package org.switchml.spark.config;

import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.switchml.protocol.SwitchAddress;

/**
 * Resolves {@code spark.switchml.worker.host} on an executor: a subnet {@code a.b.c.d/len} names the
 * executor's own interface address in it (each executor finds its own), anything else is used as given; when
 * it is empty, {@link #automatic} picks the address.
 */
public final class WorkerHosts {
    /**
     * Not a setting: the key under which the driver plugin tells the executor plugins the host of the switch's
     * dataplane, as the driver found it at start-up, for {@link #automatic}.
     */
    public static final String SWITCH_HOST_FROM_DRIVER = "switchml.switchHost";

    private WorkerHosts() {}

    /**
     * The address a worker socket binds when {@code spark.switchml.worker.host} is empty: {@code ownHost}, the
     * host Spark knows the executor by (the driver's, for a local master), unless that is a loopback address and
     * the switch is not. A worker bound to loopback never hears a switch elsewhere, so it then binds the local
     * address the kernel routes to the switch from (a route lookup: nothing is sent). {@code switchHost} may be
     * null (not known): {@code ownHost} then, as when there is no route.
     */
    public static String automatic(final String ownHost, final String switchHost) {
        return automatic(ownHost, switchHost, WorkerHosts::routeFrom);
    }

    /** {@link #automatic(String, String)} with the route lookup given: the local address toward an address, or null. */
    static String automatic(
            final String ownHost, final String switchHost, final Function<InetAddress, InetAddress> route) {
        if (switchHost == null || switchHost.isEmpty()) {
            return ownHost;
        }
        try {
            final InetAddress own = InetAddress.getByName(ownHost);
            final InetAddress target = InetAddress.getByName(switchHost);
            if (!own.isLoopbackAddress() || target.isLoopbackAddress()) {
                return ownHost;
            }
            final InetAddress from = route.apply(target);
            return from == null || from.isLoopbackAddress() ? ownHost : from.getHostAddress();
        } catch (final UnknownHostException e) {
            return ownHost;
        }
    }

    /**
     * The switch's host as far as {@code settings} tell (null when they do not): the driver plugin's word
     * ({@link #SWITCH_HOST_FROM_DRIVER}), else {@code spark.switchml.switch.address}, else the host of the job
     * service, which is where a shared switch's dataplane usually is, or at least the network it is on.
     */
    public static String switchHost(final Map<String, String> settings) {
        final String fromDriver = settings.get(SWITCH_HOST_FROM_DRIVER);
        if (fromDriver != null && !fromDriver.isEmpty()) {
            return fromDriver;
        }
        final String address = SwitchMLConfig.SWITCH_ADDRESS.from(settings::get);
        if (!address.isEmpty()) {
            return SwitchAddress.parse(address).host();
        }
        final String service = SwitchMLConfig.JOB_SERVICE_ADDRESS.from(settings::get);
        return service.isEmpty() ? null : service.substring(0, service.lastIndexOf(':'));
    }

    /** The local address of the route to {@code to}, or null: connecting a UDP socket only picks the route. */
    static InetAddress routeFrom(final InetAddress to) {
        try (DatagramSocket s = new DatagramSocket()) {
            s.connect(to, 9);
            final InetAddress local = s.getLocalAddress();
            return local == null || local.isAnyLocalAddress() ? null : local;
        } catch (final SocketException | UncheckedIOException e) {
            return null; // no route: the caller keeps its own host
        }
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

package org.switchml.protocol;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a switch's dataplane listens: a host and its lane ports. Slot {@code s} goes to lane
 * {@code s mod lanes} (docs/protocol.md, section 1). Written as {@code host:port1,port2,...}.
 *
 * @param host      IPv4 address or name of the switch
 * @param lanePorts UDP port of each lane
 */
public record SwitchAddress(String host, List<Integer> lanePorts) {

    public SwitchAddress {
        lanePorts = List.copyOf(lanePorts);
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("switch address needs a host");
        }
        if (lanePorts.isEmpty()) {
            throw new IllegalArgumentException("switch address " + host + " needs at least one lane port");
        }
        for (final int p : lanePorts) {
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("switch address " + host + ": bad lane port " + p);
            }
        }
    }

    /** Parses {@code host:port1,port2,...}. */
    public static SwitchAddress parse(final String text) {
        final int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("switch address must look like host:port[,port...], got '" + text + "'");
        }
        final List<Integer> ports = new ArrayList<>();
        for (final String p : text.substring(colon + 1).split(",")) {
            try {
                ports.add(Integer.parseInt(p.trim()));
            } catch (final NumberFormatException e) {
                throw new IllegalArgumentException("switch address '" + text + "': bad port '" + p + "'", e);
            }
        }
        return new SwitchAddress(text.substring(0, colon), ports);
    }

    /** Number of lanes. */
    public int lanes() {
        return lanePorts.size();
    }

    /** Lane port that serves {@code slot}. */
    public int portForSlot(final int slot) {
        return lanePorts.get(slot % lanePorts.size());
    }

    /** Socket address of every lane, in lane order. */
    public List<InetSocketAddress> laneAddresses() {
        final List<InetSocketAddress> out = new ArrayList<>(lanePorts.size());
        for (final int p : lanePorts) {
            out.add(new InetSocketAddress(host, p));
        }
        return out;
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder(host).append(':');
        for (int i = 0; i < lanePorts.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(lanePorts.get(i));
        }
        return sb.toString();
    }
}

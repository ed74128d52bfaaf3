package org.switchml.control;

/**
 * Where a worker hangs off a BMv2 switch: its MAC address (destination MAC of the results sent to it) and
 * the switch port towards it (egress port of its multicast replica). The software switch needs neither.
 * A deployment usually writes them once per topology in a {@link HostTable}; the controller looks
 * each worker up there.
 *
 * @param mac        48-bit MAC address
 * @param switchPort BMv2 port number ({@code -i PORT@IFACE})
 */
public record WorkerAttachment(long mac, int switchPort) {

    public WorkerAttachment {
        if (mac < 0 || mac >>> 48 != 0) {
            throw new IllegalArgumentException("MAC address must fit 48 bits, got 0x" + Long.toHexString(mac));
        }
        if (switchPort < 0) {
            throw new IllegalArgumentException("switch port must be >= 0, got " + switchPort);
        }
    }

    /** Parses {@code aa:bb:cc:dd:ee:ff}. */
    public static long parseMac(final String text) {
        final String[] parts = text.split(":");
        if (parts.length != 6) {
            throw new IllegalArgumentException("MAC address must look like aa:bb:cc:dd:ee:ff, got '" + text + "'");
        }
        long mac = 0;
        for (final String p : parts) {
            if (!p.matches("[0-9a-fA-F]{1,2}")) {
                throw new IllegalArgumentException("MAC address must look like aa:bb:cc:dd:ee:ff, got '" + text + "'");
            }
            mac = (mac << 8) | Integer.parseInt(p, 16);
        }
        return mac;
    }

    /** {@code aa:bb:cc:dd:ee:ff} of a 48-bit MAC address. */
    public static String formatMac(final long mac) {
        final StringBuilder sb = new StringBuilder();
        for (int shift = 40; shift >= 0; shift -= 8) {
            sb.append(String.format("%02x", (mac >>> shift) & 0xFF));
            if (shift > 0) {
                sb.append(':');
            }
        }
        return sb.toString();
    }
}

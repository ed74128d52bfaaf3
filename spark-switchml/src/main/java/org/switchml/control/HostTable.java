package org.switchml.control;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The static topology of a P4 switch: for each host on its data ports, the host's IPv4 address, the
 * switch port it hangs off and its MAC address. An operator writes it once per topology (it changes only
 * when cables or NICs do), and the controller looks every worker of a job up in it, so the job's creator
 * only names workers by IPv4 address and UDP port, as on the software switch.
 *
 * <p>File format, one host per line, {@code #} starts a comment:
 * <pre>
 * # IPv4      switch-port  MAC
 * 10.0.0.1    1            02:00:00:00:00:01
 * 10.0.0.2    2            02:00:00:00:00:02
 * </pre>
 * A switch port may carry several hosts (e.g. behind another switch): each has its own line.
 */
public final class HostTable {
    private static final HostTable EMPTY = new HostTable(Map.of());

    private final Map<Inet4Address, WorkerAttachment> hosts;

    private HostTable(final Map<Inet4Address, WorkerAttachment> hosts) {
        this.hosts = Collections.unmodifiableMap(new LinkedHashMap<>(hosts));
    }

    /** No hosts: every BMv2 job then needs explicit attachments. */
    public static HostTable empty() {
        return EMPTY;
    }

    /** A table of the given hosts. */
    public static HostTable of(final Map<Inet4Address, WorkerAttachment> hosts) {
        return new HostTable(hosts);
    }

    /** Parses the text format (see the class comment); {@code source} names it in errors. */
    public static HostTable parse(final String text, final String source) {
        final Map<Inet4Address, WorkerAttachment> out = new LinkedHashMap<>();
        int lineNo = 0;
        for (final String raw : text.split("\n", -1)) {
            lineNo++;
            final int hash = raw.indexOf('#');
            final String line = (hash >= 0 ? raw.substring(0, hash) : raw).trim();
            if (line.isEmpty()) {
                continue;
            }
            final String where = source + " line " + lineNo;
            final String[] f = line.split("\\s+");
            if (f.length != 3) {
                throw new IllegalArgumentException(where + ": want 'IPv4 SWITCH_PORT MAC', got '" + line + "'");
            }
            final Inet4Address ip = ipv4(f[0], where);
            final int port;
            try {
                port = Integer.parseInt(f[1]);
            } catch (final NumberFormatException e) {
                throw new IllegalArgumentException(where + ": switch port '" + f[1] + "' is not a number");
            }
            final WorkerAttachment a;
            try {
                a = new WorkerAttachment(WorkerAttachment.parseMac(f[2].toLowerCase(Locale.ROOT)), port);
            } catch (final IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
            if (out.put(ip, a) != null) {
                throw new IllegalArgumentException(where + ": " + f[0] + " is listed twice");
            }
        }
        return new HostTable(out);
    }

    /** Reads a host table file. */
    public static HostTable read(final Path file) {
        try {
            return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read host table " + file + ": " + e.getMessage(), e);
        }
    }

    private static Inet4Address ipv4(final String text, final String where) {
        if (!text.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new IllegalArgumentException(where + ": '" + text + "' is not an IPv4 address");
        }
        try {
            // A literal: no name lookup happens.
            return (Inet4Address) InetAddress.getByName(text);
        } catch (final UnknownHostException | ClassCastException e) {
            throw new IllegalArgumentException(where + ": '" + text + "' is not an IPv4 address", e);
        }
    }

    /** Where the host with address {@code ip} is attached, or null. */
    public WorkerAttachment lookup(final InetAddress ip) {
        return ip instanceof Inet4Address v4 ? hosts.get(v4) : null;
    }

    /** Every host, in file order. */
    public Map<Inet4Address, WorkerAttachment> hosts() {
        return hosts;
    }

    /** Whether the table lists no host. */
    public boolean isEmpty() {
        return hosts.isEmpty();
    }

    /** The text format, parseable by {@link #parse}. */
    public String format() {
        final StringBuilder sb = new StringBuilder("# IPv4 switch-port MAC\n");
        for (final Map.Entry<Inet4Address, WorkerAttachment> e : hosts.entrySet()) {
            sb.append(e.getKey().getHostAddress())
                    .append(' ')
                    .append(e.getValue().switchPort())
                    .append(' ')
                    .append(WorkerAttachment.formatMac(e.getValue().mac()))
                    .append('\n');
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "HostTable"
                + hosts.keySet().stream().map(Inet4Address::getHostAddress).toList();
    }
}

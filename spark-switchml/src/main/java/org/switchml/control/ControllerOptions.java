package org.switchml.control;

import org.switchml.p4info.P4InfoIndex;

/**
 * How a {@link SwitchController} reaches its switch.
 *
 * @param host         P4Runtime server host, or {@code unix:/path} for a server on a Unix domain socket
 *                     ({@code simple_switch_grpc ... -- --grpc-server-addr unix:/path}); the port is then 0
 * @param port         P4Runtime server port (9559 for BMv2 by convention)
 * @param deviceId     P4Runtime device id of the switch ({@code simple_switch_grpc --device-id})
 * @param electionId     the low 64 bits of this controller's election id (unsigned); the highest live id is primary
 * @param p4info         the P4Info pushed and used to resolve every name
 * @param rpcTimeoutMs   bound on every RPC and on the arbitration answer
 * @param hosts          the switch's host table: each worker's switch port and MAC (BMv2); empty by default
 * @param electionIdHigh the high 64 bits of the election id (unsigned); 0 by default
 */
public record ControllerOptions(
        String host,
        int port,
        long deviceId,
        long electionId,
        P4InfoIndex p4info,
        long rpcTimeoutMs,
        HostTable hosts,
        long electionIdHigh) {

    /** Default bound on one RPC. */
    public static final long DEFAULT_RPC_TIMEOUT_MS = 10_000;

    private static final String UNIX = "unix:";

    public ControllerOptions {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("controller needs the switch's P4Runtime host");
        }
        if (host.startsWith(UNIX)) {
            if (!host.substring(UNIX.length()).startsWith("/") || port != 0) {
                throw new IllegalArgumentException("a Unix socket P4Runtime address is unix:/absolute/path with "
                        + "port 0, got " + host + " port " + port);
            }
        } else if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad P4Runtime port " + port);
        }
        if (electionId == 0 && electionIdHigh == 0) {
            throw new IllegalArgumentException("election id 0 is not a valid primary election id");
        }
        if (p4info == null) {
            p4info = P4InfoIndex.bundled();
        }
        if (rpcTimeoutMs < 1) {
            throw new IllegalArgumentException("RPC timeout must be >= 1 ms, got " + rpcTimeoutMs);
        }
        if (hosts == null) {
            hosts = HostTable.empty();
        }
    }

    /** The options with an election id below 2^64. */
    public ControllerOptions(
            final String host,
            final int port,
            final long deviceId,
            final long electionId,
            final P4InfoIndex p4info,
            final long rpcTimeoutMs,
            final HostTable hosts) {
        this(host, port, deviceId, electionId, p4info, rpcTimeoutMs, hosts, 0);
    }

    /** The options without a host table (the software switch, or BMv2 with explicit attachments). */
    public ControllerOptions(
            final String host,
            final int port,
            final long deviceId,
            final long electionId,
            final P4InfoIndex p4info,
            final long rpcTimeoutMs) {
        this(host, port, deviceId, electionId, p4info, rpcTimeoutMs, HostTable.empty(), 0);
    }

    /** Device 0, election id 1, the bundled P4Info of p4/switchml.p4, default timeout, no host table. */
    public static ControllerOptions of(final String host, final int port) {
        return new ControllerOptions(host, port, 0, 1, P4InfoIndex.bundled(), DEFAULT_RPC_TIMEOUT_MS);
    }

    /** {@link #of(String, int)} for {@code host:port} or {@code unix:/path}. */
    public static ControllerOptions of(final String address) {
        if (address.startsWith(UNIX)) {
            return of(address, 0);
        }
        final int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("a P4Runtime address is host:port or unix:/path, got '" + address + "'");
        }
        final int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException("bad port in P4Runtime address '" + address + "'", e);
        }
        return of(address.substring(0, colon), port);
    }

    /** The same options with election id {@code id} (below 2^64). */
    public ControllerOptions withElectionId(final long id) {
        return new ControllerOptions(host, port, deviceId, id, p4info, rpcTimeoutMs, hosts, 0);
    }

    /**
     * The same options with the highest election id there is, 2^128 - 1: by P4Runtime's arbitration no other
     * controller can then become primary (one that asks for the same id is refused, any other is a backup).
     */
    public ControllerOptions withHighestElectionId() {
        return new ControllerOptions(host, port, deviceId, -1L, p4info, rpcTimeoutMs, hosts, -1L);
    }

    public ControllerOptions withDeviceId(final long id) {
        return new ControllerOptions(host, port, id, electionId, p4info, rpcTimeoutMs, hosts, electionIdHigh);
    }

    public ControllerOptions withP4Info(final P4InfoIndex index) {
        return new ControllerOptions(host, port, deviceId, electionId, index, rpcTimeoutMs, hosts, electionIdHigh);
    }

    /** The same options with the switch's host table (where each worker hangs off a BMv2 switch). */
    public ControllerOptions withHosts(final HostTable table) {
        return new ControllerOptions(host, port, deviceId, electionId, p4info, rpcTimeoutMs, table, electionIdHigh);
    }

    /** The election id as messages write it: its low 64 bits when the high ones are 0, else high:low (unsigned). */
    public String electionIdText() {
        return electionIdHigh == 0
                ? Long.toUnsignedString(electionId)
                : Long.toUnsignedString(electionIdHigh) + ":" + Long.toUnsignedString(electionId);
    }

    /** The socket path of a {@code unix:/path} address, else null. */
    public String unixSocket() {
        return host.startsWith(UNIX) ? host.substring(UNIX.length()) : null;
    }

    /** {@code host:port} or {@code unix:/path}, for messages. */
    public String target() {
        return unixSocket() != null ? host : host + ":" + port;
    }
}

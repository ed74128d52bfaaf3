package org.switchml.control;

import org.switchml.p4info.P4InfoIndex;

/**
 * How a {@link SwitchController} reaches its switch.
 *
 * @param host         P4Runtime server host
 * @param port         P4Runtime server port (9559 for BMv2 by convention)
 * @param deviceId     P4Runtime device id of the switch ({@code simple_switch_grpc --device-id})
 * @param electionId   this controller's election id (low 64 bits; high bits 0); the highest live one is primary
 * @param p4info       the P4Info pushed and used to resolve every name
 * @param rpcTimeoutMs bound on every RPC and on the arbitration answer
 */
public record ControllerOptions(String host, int port, long deviceId, long electionId, P4InfoIndex p4info,
                                long rpcTimeoutMs) {

    /** Default bound on one RPC. */
    public static final long DEFAULT_RPC_TIMEOUT_MS = 10_000;

    public ControllerOptions {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("controller needs the switch's P4Runtime host");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad P4Runtime port " + port);
        }
        if (electionId == 0) {
            throw new IllegalArgumentException("election id 0 is not a valid primary election id");
        }
        if (p4info == null) {
            p4info = P4InfoIndex.bundled();
        }
        if (rpcTimeoutMs < 1) {
            throw new IllegalArgumentException("RPC timeout must be >= 1 ms, got " + rpcTimeoutMs);
        }
    }

    /** Device 0, election id 1, the bundled P4Info of p4/switchml.p4, default timeout. */
    public static ControllerOptions of(final String host, final int port) {
        return new ControllerOptions(host, port, 0, 1, P4InfoIndex.bundled(), DEFAULT_RPC_TIMEOUT_MS);
    }

    public ControllerOptions withElectionId(final long id) {
        return new ControllerOptions(host, port, deviceId, id, p4info, rpcTimeoutMs);
    }

    public ControllerOptions withDeviceId(final long id) {
        return new ControllerOptions(host, port, id, electionId, p4info, rpcTimeoutMs);
    }

    public ControllerOptions withP4Info(final P4InfoIndex index) {
        return new ControllerOptions(host, port, deviceId, electionId, index, rpcTimeoutMs);
    }

    public ControllerOptions withRpcTimeoutMs(final long ms) {
        return new ControllerOptions(host, port, deviceId, electionId, p4info, ms);
    }

    /** {@code host:port}, for messages. */
    public String target() {
        return host + ":" + port;
    }
}

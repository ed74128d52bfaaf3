package org.switchml.dataplane.p4runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.switchml.control.ControllerOptions;
import org.switchml.control.SwitchControlException;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;

/**
 * The P4Runtime server (unauthenticated, like BMv2's) binds loopback unless an address is given, both as a
 * library and as the standalone switch, and it still serves one primary controller at a time.
 */
class RuntimeServerBindingTest {

    @Test
    void withoutAnAddressTheServerListensOnLoopbackOnly() throws Exception {
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer server = SwitchRuntimeServer.start(sw, 0)) {
            final InetSocketAddress bound = server.boundAddress();
            System.out.println("[binding] P4Runtime server bound to " + bound);
            assertTrue(bound.getAddress().isLoopbackAddress(), "bound to " + bound);
            assertEquals(SwitchRuntimeServer.DEFAULT_HOST, server.host());
            final InetAddress external = firstNonLoopbackIpv4();
            if (external == null) {
                System.out.println("[binding] no non-loopback IPv4 interface here: only the bound address is checked");
            } else {
                // A local but non-loopback address of this host must not reach the server.
                assertThrows(
                        IOException.class,
                        () -> {
                            try (Socket s = new Socket()) {
                                s.connect(new InetSocketAddress(external, server.port()), 2_000);
                            }
                        },
                        "reached the server through " + external);
            }

            // Single primary, as before: the same election id again is refused, a lower one is a backup.
            try (SwitchController primary = SwitchController.connect(
                    ControllerOptions.of("127.0.0.1", server.port()).withElectionId(10))) {
                assertTrue(primary.isPrimary());
                final SwitchControlException same = assertThrows(
                        SwitchControlException.class,
                        () -> SwitchController.connect(
                                ControllerOptions.of("127.0.0.1", server.port()).withElectionId(10)));
                assertEquals(Status.Code.INVALID_ARGUMENT, same.code(), same.getMessage());
                final SwitchControlException lower = assertThrows(
                        SwitchControlException.class,
                        () -> SwitchController.connect(
                                ControllerOptions.of("127.0.0.1", server.port()).withElectionId(9)));
                assertEquals(Status.Code.PERMISSION_DENIED, lower.code(), lower.getMessage());
                assertTrue(primary.isPrimary(), "the first controller stays primary");
            }
        }
    }

    private static InetAddress firstNonLoopbackIpv4() throws SocketException {
        for (final NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!i.isUp() || i.isLoopback()) {
                continue;
            }
            for (final InetAddress a : Collections.list(i.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
                    return a;
                }
            }
        }
        return null;
    }
}

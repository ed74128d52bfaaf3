package org.switchml.spark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The worker socket's address when {@code spark.switchml.worker.host} is empty: the executor's own host, unless
 * that is loopback and the switch is not; then the local address of the route to the switch. The route lookup
 * is the kernel's on loopback; for a switch on another network (this machine has only loopback to use) the
 * lookup's answer is given, and the test checks what is done with it.
 */
@Timeout(30)
class WorkerHostsTest {
    /** A route lookup that answers {@code from} and records what it was asked. */
    private static Function<InetAddress, InetAddress> routeAnswering(final String from, final List<InetAddress> asked) {
        return to -> {
            asked.add(to);
            try {
                return from == null ? null : InetAddress.getByName(from);
            } catch (final UnknownHostException e) {
                throw new AssertionError(e);
            }
        };
    }

    @Test
    void aLoopbackExecutorBindsTheAddressOfItsRouteToASwitchElsewhere() throws Exception {
        final List<InetAddress> asked = new ArrayList<>();
        assertEquals("10.0.0.7", WorkerHosts.automatic("127.0.0.1", "10.0.0.5", routeAnswering("10.0.0.7", asked)));
        assertEquals(List.of(InetAddress.getByName("10.0.0.5")), asked, "the route to the switch was looked up");
        // A host name that resolves to loopback is loopback too.
        assertEquals("10.0.0.7", WorkerHosts.automatic("localhost", "10.0.0.5", routeAnswering("10.0.0.7", asked)));
        // No route, or a route through loopback: the executor's own host, as without a switch host.
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", "10.0.0.5", routeAnswering(null, asked)));
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", "10.0.0.5", routeAnswering("127.0.0.1", asked)));
    }

    @Test
    void otherwiseTheExecutorsOwnHostWithoutALookup() {
        final List<InetAddress> asked = new ArrayList<>();
        final Function<InetAddress, InetAddress> route = routeAnswering("10.0.0.7", asked);
        // Known by a non-loopback address: that one, whatever the route says.
        assertEquals("192.168.77.3", WorkerHosts.automatic("192.168.77.3", "10.0.0.5", route));
        // A switch on loopback (the embedded switch of a loopback driver): loopback reaches it.
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", "127.0.0.1", route));
        // Where the switch is is not known.
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", null, route));
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", "", route));
        assertTrue(asked.isEmpty(), "looked up " + asked);
    }

    @Test
    void theKernelsRouteToLoopbackIsLoopback() throws Exception {
        final InetAddress from = WorkerHosts.routeFrom(InetAddress.getByName("127.0.0.1"));
        assertNotNull(from);
        assertTrue(from.isLoopbackAddress(), from.toString());
        assertEquals("127.0.0.1", WorkerHosts.automatic("127.0.0.1", "127.0.0.1"));
    }

    @Test
    void theSwitchHostComesFromTheDriverElseTheSettings() {
        assertEquals(
                "10.0.0.254",
                WorkerHosts.switchHost(Map.of(
                        WorkerHosts.SWITCH_HOST_FROM_DRIVER,
                        "10.0.0.254",
                        "spark.switchml.switch.address",
                        "10.0.0.9:48864",
                        "spark.switchml.jobService.address",
                        "127.0.0.1:9560")));
        assertEquals(
                "10.0.0.9",
                WorkerHosts.switchHost(Map.of(
                        "spark.switchml.switch.address",
                        "10.0.0.9:48864,48865",
                        "spark.switchml.jobService.address",
                        "127.0.0.1:9560")));
        assertEquals("10.0.0.5", WorkerHosts.switchHost(Map.of("spark.switchml.jobService.address", "10.0.0.5:9560")));
        assertNull(WorkerHosts.switchHost(Map.of("spark.driver.host", "127.0.0.1")));
    }
}

package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The host table's file format: what it accepts, what it refuses (naming the line), and its round trip. */
class HostTableTest {

    @Test
    void parsesLinesCommentsAndFormatsBack() throws Exception {
        final HostTable t = HostTable.parse(
                "# topology of rack 7\n10.0.0.1 1 02:00:00:00:00:01\n\n"
                        + "  10.0.0.2\t2   02:00:00:00:00:0A  # behind port 2\n",
                "test");
        assertEquals(
                Map.of(
                        InetAddress.getByName("10.0.0.1"),
                        new WorkerAttachment(0x020000000001L, 1),
                        InetAddress.getByName("10.0.0.2"),
                        new WorkerAttachment(0x02000000000aL, 2)),
                t.hosts());
        assertEquals(new WorkerAttachment(0x02000000000aL, 2), t.lookup(InetAddress.getByName("10.0.0.2")));
        assertNull(t.lookup(InetAddress.getByName("10.0.0.3")));
        assertEquals(t.hosts(), HostTable.parse(t.format(), "round trip").hosts());
    }

    @Test
    void refusesBadLinesNamingThem() {
        for (final String bad : new String[] {
            "10.0.0.1 1",
            "10.0.0.256 1 02:00:00:00:00:01",
            "host 1 02:00:00:00:00:01",
            "10.0.0.1 x 02:00:00:00:00:01",
            "10.0.0.1 1 02:00:00:00:01",
            "10.0.0.1 -1 02:00:00:00:00:01",
            "10.0.0.1 1 02:00:00:00:00:01\n10.0.0.1 2 02:00:00:00:00:02"
        }) {
            final IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class, () -> HostTable.parse("# header\n" + bad, "hosts.txt"), bad);
            assertTrue(e.getMessage().startsWith("hosts.txt line "), e.getMessage());
        }
    }

    @Test
    void unixSocketAndTcpAddresses() {
        assertEquals(
                "/tmp/p4rt.sock", ControllerOptions.of("unix:/tmp/p4rt.sock").unixSocket());
        assertEquals(
                "unix:/tmp/p4rt.sock",
                ControllerOptions.of("unix:/tmp/p4rt.sock").target());
        assertEquals(9559, ControllerOptions.of("127.0.0.1:9559").port());
        assertThrows(IllegalArgumentException.class, () -> ControllerOptions.of("unix:relative"));
        assertThrows(IllegalArgumentException.class, () -> ControllerOptions.of("nohostport"));
    }
}

package org.switchml.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.service.standalone.SwitchMain;

/**
 * Worker addresses: IPv4 literals only, never a name (the switch looks nothing up), and never an address results
 * could not go to, or would loop back into the switch.
 */
@Timeout(60)
class WorkerAddressesTest {
    @TempDir
    Path dir;

    @Test
    void onlyIpv4LiteralsAreTakenAndNamesAreNeverLookedUp() throws Exception {
        assertEquals(InetAddress.getByAddress(new byte[] {10, 0, 0, 1}), WorkerAddresses.ipv4Literal("10.0.0.1"));
        assertEquals(
                InetAddress.getByAddress(new byte[] {(byte) 255, 0, 0, 0}), WorkerAddresses.ipv4Literal("255.0.0.0"));
        // "localhost" resolves here (the control), yet is refused as a name, not as something unknown.
        assertNotNull(InetAddress.getByName("localhost"));
        for (final String bad : new String[] {
            "localhost",
            "worker-7.rack.example",
            "010.0.0.1",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "::1",
            "",
            " 1.2.3.4",
            "1.2.3.4 ",
            "1.2.3.-4",
            "0x7f.0.0.1",
            "1.2.3.4\n"
        }) {
            final IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> WorkerAddresses.ipv4Literal(bad), bad);
            assertTrue(
                    e.getMessage().contains("is not an IPv4 address literal")
                            && e.getMessage().contains("resolves " + "no names"),
                    e.getMessage());
            assertTrue(e.getMessage().chars().noneMatch(Character::isISOControl), e.getMessage());
        }
    }

    @Test
    void multicastBroadcastUnspecifiedAndTheSwitchItselfAreRefused() throws Exception {
        final WorkerAddresses rules = new WorkerAddresses(new SwitchAddress("127.0.0.1", List.of(48864, 48865)));
        for (final String refused : new String[] {
            "224.0.0.1:5000",
            "239.255.255.250:1900",
            "255.255.255.255:5000",
            "0.0.0.0:5000",
            "0.1.2.3:5000",
            "240.0.0.1:5000",
            "127.0.0.1:48864",
            "127.0.0.1:48865"
        }) {
            final int c = refused.lastIndexOf(':');
            final InetSocketAddress w = new InetSocketAddress(
                    WorkerAddresses.ipv4Literal(refused.substring(0, c)), Integer.parseInt(refused.substring(c + 1)));
            assertNotNull(rules.refusal(w), refused + " was taken");
        }
        // Positive control: ordinary unicast workers, the switch's host on another port included.
        for (final InetSocketAddress ok : List.of(
                new InetSocketAddress("127.0.0.1", 48866),
                new InetSocketAddress("10.0.0.7", 48864),
                new InetSocketAddress("192.168.1.255", 5000))) {
            assertNull(rules.refusal(ok), ok.toString());
        }
    }

    @Test
    void theServiceRefusesThemAtItsDoorAndChangesNothing() {
        try (SwitchMain.Running sw = SwitchMain.start(
                        new PrintStream(new ByteArrayOutputStream()),
                        "--port",
                        "0",
                        "--lanes",
                        "1",
                        "--service-port",
                        "0",
                        "--token-file",
                        dir.resolve("token").toString());
                JobServiceClient c = JobServiceClient.connect(
                        "127.0.0.1",
                        sw.jobs().port(),
                        TlsFiles.client(
                                "", "", "", BearerToken.read(sw.tokenFile()), "127.0.0.1", "the job service"))) {
            final JobDesk.Grant g = c.open("addresses");
            final int lane = sw.sw().address().lanePorts().get(0);
            for (final InetSocketAddress w :
                    List.of(new InetSocketAddress("224.1.2.3", 5000), new InetSocketAddress("127.0.0.1", lane))) {
                final JobServiceException e = assertThrows(
                        JobServiceException.class,
                        () -> c.create(
                                g.sessionId(),
                                new JobSpec(
                                        g.jobIdBase(),
                                        0,
                                        0,
                                        64,
                                        8,
                                        List.of(new InetSocketAddress("127.0.0.1", 5001), w)),
                                0));
                assertEquals(JobServiceException.Kind.REFUSED, e.kind(), e.getMessage());
                assertTrue(
                        e.getMessage().contains("INVALID_ARGUMENT")
                                && e.getMessage().contains("rank 1's address"),
                        e.getMessage());
            }
            assertEquals(0, c.describe().jobs());
            // Positive control: the same job with an ordinary second worker is installed.
            c.create(
                    g.sessionId(),
                    new JobSpec(
                            g.jobIdBase(),
                            0,
                            0,
                            64,
                            8,
                            List.of(
                                    new InetSocketAddress("127.0.0.1", 5001),
                                    new InetSocketAddress("127.0.0.1", 5002))),
                    0);
            assertEquals(1, c.close(g.sessionId()));
        }
    }
}

package org.switchml.service.standalone;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The standalone switch's command line: help, usage errors with exit 2, start failures with exit 1, and what it
 * serves once started (the job service on loopback, P4Runtime only when asked, with the operators' token).
 */
@Timeout(120)
class SwitchMainTest {
    @TempDir
    Path dir;

    private record Outcome(int code, String out, String err) {
    }

    private static Outcome run(final String... args) throws InterruptedException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = SwitchMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryOptionAndExitsZero() throws Exception {
        final Outcome o = run("--help");
        assertEquals(0, o.code());
        for (final String opt : new String[] {"--host", "--port", "--lanes", "--service-host", "--service-port",
                "--token-file", "--tls-cert", "--tls-key", "--client-ca", "--renew-interval-ms", "--admission-timeout-ms",
                "--p4runtime-port", "--p4runtime-token-file", "--device-id", "--max-workers-per-job"}) {
            assertTrue(o.out().contains(opt), opt + " missing from help:\n" + o.out());
        }
    }

    @Test
    void usageErrorsNameTheBadValueAndExitTwo() throws Exception {
        final String[][] cases = {
                {"--port", "abc"}, {"--lanes", "-1"}, {"--lanes", "17"}, {"--bogus", "1"}, {"--port"},
                {"--device-id", "x"}, {"stray"}, {"--p4runtime-port", "0"}, {"--p4runtime-port", "on"},
                {"--max-workers-per-job", "257"}};
        final String[] expected = {"'abc'", "-1", "17", "--bogus", "--port", "'x'", "stray", "--p4runtime-token-file",
                "'on'", "--max-workers-per-job 257 is outside 1..256"};
        for (int i = 0; i < cases.length; i++) {
            final Outcome o = run(cases[i]);
            assertEquals(2, o.code(), String.join(" ", cases[i]));
            final String first = o.err().lines().findFirst().orElse("");
            assertTrue(first.startsWith("switchml-switch: ") && first.contains(expected[i]), first);
            assertFalse(o.err().contains("Exception") || o.err().contains("\tat "), o.err());
        }
    }

    @Test
    void aPortInUseIsNamedAndExitsOne() throws Exception {
        try (DatagramSocket taken = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            final int port = taken.getLocalPort();
            final Outcome o = run("--port", Integer.toString(port), "--lanes", "1", "--service-port", "0",
                    "--token-file", dir.resolve("token").toString());
            assertEquals(1, o.code());
            assertTrue(o.err().contains("127.0.0.1") && o.err().contains(Integer.toString(port)), o.err());
            assertFalse(o.err().contains("\tat "), o.err());
        }
    }

    @Test
    void anUnknownHostIsNamedAndExitsOne() throws Exception {
        final Outcome o = run("--host", "no-such-host.invalid", "--token-file", dir.resolve("token").toString());
        assertEquals(1, o.code());
        assertTrue(o.err().contains("no-such-host.invalid") && o.err().contains("unknown host"), o.err());
    }

    @Test
    void startsTheJobServiceOnLoopbackWithANewPrivateTokenAndNoP4RuntimeSocket() throws Exception {
        final Path token = dir.resolve("sub").resolve("token");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (SwitchMain.Running r = SwitchMain.start(new PrintStream(out, true, StandardCharsets.UTF_8),
                "--port", "0", "--lanes", "3", "--service-port", "0", "--token-file", token.toString())) {
            assertEquals(3, r.sw().address().lanes());
            assertTrue(r.jobs().port() > 0);
            assertEquals("127.0.0.1:" + r.jobs().port(), r.serviceAddress());
            assertEquals(-1, r.p4runtime().port(), "P4Runtime is served in process only unless asked");
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("wrote a new bearer token to " + token));
            assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                    Files.getPosixFilePermissions(token));
            assertTrue(Files.readString(token).trim().length() >= 32);
        }
        // A second start keeps the token that is there.
        final String before = Files.readString(token);
        try (SwitchMain.Running r = SwitchMain.start(new PrintStream(new ByteArrayOutputStream()), "--port", "0",
                "--lanes", "1", "--service-port", "0", "--token-file", token.toString(),
                "--p4runtime-port", "0", "--p4runtime-host", "127.0.0.2",
                "--p4runtime-token-file", Files.writeString(dir.resolve("ops"), "operators-token-0123456789\n").toString())) {
            assertEquals(before, Files.readString(token));
            assertEquals("127.0.0.2", r.p4runtime().boundAddress().getAddress().getHostAddress());
        }
    }

    @Test
    void aTooShortTokenIsRefused() throws Exception {
        final Path token = Files.writeString(dir.resolve("short"), "abc\n");
        final Outcome o = run("--port", "0", "--service-port", "0", "--token-file", token.toString());
        assertEquals(1, o.code());
        assertTrue(o.err().contains("at least 16"), o.err());
        assertThrows(IllegalArgumentException.class, () -> SwitchMain.start(System.out, "--lanes", "99"));
    }
}

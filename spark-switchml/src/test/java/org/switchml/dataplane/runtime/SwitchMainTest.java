package org.switchml.dataplane.runtime;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The standalone switch's command line: help, one-line usage errors with exit 2, start failures with exit 1. */
class SwitchMainTest {
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
        for (final String opt : new String[] {"--host", "--port", "--lanes", "--p4runtime-host", "--p4runtime-port",
                "--device-id", "--job"}) {
            assertTrue(o.out().contains(opt), opt + " missing from help:\n" + o.out());
        }
    }

    @Test
    void usageErrorsNameTheBadValueOnOneLineAndExitTwo() throws Exception {
        final String[][] cases = {
                {"--port", "abc"}, {"--lanes", "-1"}, {"--lanes", "17"}, {"--bogus", "1"}, {"--port"},
                {"--job", "1:0:64:8:nohostport"}, {"--device-id", "x"}, {"stray"}};
        final String[] expected = {"'abc'", "-1", "17", "--bogus", "--port", "nohostport", "'x'", "'stray'"};
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
            final Outcome o = run("--port", Integer.toString(port), "--lanes", "1", "--p4runtime-port", "off");
            assertEquals(1, o.code());
            assertTrue(o.err().contains("127.0.0.1") && o.err().contains(Integer.toString(port)), o.err());
            assertFalse(o.err().contains("\tat "), o.err());
        }
    }

    @Test
    void anUnknownHostIsNamedAndExitsOne() throws Exception {
        final Outcome o = run("--host", "no-such-host.invalid", "--p4runtime-port", "off");
        assertEquals(1, o.code());
        assertTrue(o.err().contains("no-such-host.invalid") && o.err().contains("unknown host"), o.err());
    }

    @Test
    void startsTheDataplaneAndItsP4RuntimeServerOnLoopback() throws Exception {
        final SwitchMain.Options o = SwitchMain.parse(new String[] {"--port", "0", "--lanes", "3", "--p4runtime-port", "0"});
        try (SwitchMain.Running r = SwitchMain.start(o)) {
            assertEquals(3, r.sw().address().lanes());
            assertEquals("127.0.0.1", r.server().host());
            assertTrue(r.server().port() > 0);
        }
    }
}

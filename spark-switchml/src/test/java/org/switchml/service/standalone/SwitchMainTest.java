package org.switchml.service.standalone;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.testing.PrivateFiles;

/**
 * The standalone switch's command line: help, usage errors with exit 2, start failures with exit 1, and what it
 * serves once started (the job service on loopback, P4Runtime only when asked, with the operators' token, which
 * must be no application's), and token files only their owner may read.
 */
@Timeout(120)
class SwitchMainTest {
    @TempDir
    Path dir;

    private record Outcome(int code, String out, String err) {}

    private static Outcome run(final String... args) throws InterruptedException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = SwitchMain.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpListsEveryOptionAndExitsZero() throws Exception {
        final Outcome o = run("--help");
        assertEquals(0, o.code());
        for (final String opt : new String[] {
            "--host",
            "--port",
            "--lanes",
            "--service-host",
            "--service-port",
            "--token-file",
            "--tls-cert",
            "--tls-key",
            "--client-ca",
            "--renew-interval-ms",
            "--admission-timeout-ms",
            "--admission-reserve-after-ms",
            "--p4runtime-port",
            "--p4runtime-token-file",
            "--p4runtime-writes",
            "--device-id",
            "--max-workers-per-job",
            "--max-applications",
            "--max-sessions-per-token",
            "--max-jobs-per-session",
            "--max-waiters-per-session",
            "--max-slots-per-job",
            "--max-job-bytes",
            "--max-bytes",
            "--max-workers",
            "--token-share-percent"
        }) {
            assertTrue(o.out().contains(opt), opt + " missing from help:\n" + o.out());
        }
    }

    @Test
    void usageErrorsNameTheBadValueAndExitTwo() throws Exception {
        final String[][] cases = {
            {"--port", "abc"},
            {"--lanes", "-1"},
            {"--lanes", "17"},
            {"--bogus", "1"},
            {"--port"},
            {"--device-id", "x"},
            {"stray"},
            {"--p4runtime-port", "0"},
            {"--p4runtime-port", "on"},
            {"--max-workers-per-job", "257"},
            {"--max-slots-per-job", "0"},
            {"--token-share-percent", "101"},
            {"--max-job-bytes", "lots"},
            {"--max-applications", "129"},
            {"--p4runtime-writes"}
        };
        final String[] expected = {
            "'abc'",
            "-1",
            "17",
            "--bogus",
            "--port",
            "'x'",
            "stray",
            "--p4runtime-token-file",
            "'on'",
            "--max-workers-per-job 257 is outside 1..256",
            "--max-slots-per-job 0 is outside 1..65536",
            "--token-share-percent 101 is outside 1..100",
            "--max-job-bytes 'lots' is not a positive byte count",
            "--max-applications 129 is outside 1..128",
            "--p4runtime-writes needs --p4runtime-port"
        };
        for (int i = 0; i < cases.length; i++) {
            final Outcome o = run(cases[i]);
            assertEquals(2, o.code(), String.join(" ", cases[i]));
            final String first = o.err().lines().findFirst().orElse("");
            assertTrue(first.startsWith("switchml-switch: ") && first.contains(expected[i]), first);
            assertEquals(1, o.err().lines().count(), "one line: " + o.err());
            assertFalse(o.err().contains("Exception") || o.err().contains("\tat "), o.err());
        }
    }

    @Test
    void aPortInUseIsNamedAndExitsOne() throws Exception {
        try (DatagramSocket taken = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
            final int port = taken.getLocalPort();
            final Outcome o = run(
                    "--port",
                    Integer.toString(port),
                    "--lanes",
                    "1",
                    "--service-port",
                    "0",
                    "--token-file",
                    dir.resolve("token").toString());
            assertEquals(1, o.code());
            assertTrue(o.err().contains("127.0.0.1") && o.err().contains(Integer.toString(port)), o.err());
            assertFalse(o.err().contains("\tat "), o.err());
        }
    }

    @Test
    void anUnknownHostIsBadInputNamedBeforeTheTokenIsWritten() throws Exception {
        final Path token = dir.resolve("unknown-host-token");
        for (final String option : new String[] {"--host", "--service-host"}) {
            final Outcome o = run(option, "no-such-host.invalid", "--token-file", token.toString());
            assertEquals(2, o.code(), o.err());
            assertTrue(o.err().contains(option + " no-such-host.invalid: unknown host"), o.err());
            assertEquals(1, o.err().lines().count(), o.err());
        }
        assertFalse(Files.exists(token), "a refused start wrote the token file");
    }

    @Test
    void unreadableTlsFilesAreBadInputNamedBeforeTheTokenIsWritten() throws Exception {
        final Path token = dir.resolve("tls-token");
        final String missing = dir.resolve("no-such.pem").toString();
        final Path notPem = Files.writeString(dir.resolve("not.pem"), "not a certificate\n");
        final String[][] cases = {
            {"--tls-cert", missing, "--tls-key", missing},
            {"--tls-cert", notPem.toString(), "--tls-key", notPem.toString()},
            {"--tls-cert", notPem.toString()},
            {"--client-ca", notPem.toString()},
            {"--service-host", "0.0.0.0"}
        };
        final String[] expected = {
            "cannot read the TLS files",
            "cannot read the TLS files",
            "needs both",
            "a client CA needs a server certificate",
            "beyond loopback, so it needs TLS"
        };
        for (int i = 0; i < cases.length; i++) {
            final List<String> args =
                    new ArrayList<>(List.of("--port", "0", "--service-port", "0", "--token-file", token.toString()));
            args.addAll(List.of(cases[i]));
            final Outcome o = run(args.toArray(String[]::new));
            assertEquals(2, o.code(), String.join(" ", cases[i]) + ": " + o.err());
            assertTrue(o.err().contains(expected[i]), o.err());
            assertEquals(1, o.err().lines().count(), o.err());
            assertFalse(o.err().contains("\tat "), o.err());
        }
        assertFalse(Files.exists(token), "a refused start wrote the token file");
    }

    @Test
    void startsTheJobServiceOnLoopbackWithANewPrivateTokenAndNoP4RuntimeSocket() throws Exception {
        final Path token = dir.resolve("sub").resolve("token");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (SwitchMain.Running r = SwitchMain.start(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                "--port",
                "0",
                "--lanes",
                "3",
                "--service-port",
                "0",
                "--token-file",
                token.toString())) {
            assertEquals(3, r.sw().address().lanes());
            assertTrue(r.jobs().port() > 0);
            assertEquals("127.0.0.1:" + r.jobs().port(), r.serviceAddress());
            assertEquals(-1, r.p4runtime().port(), "P4Runtime is served in process only unless asked");
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("wrote a new bearer token to " + token));
            assertEquals(
                    Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                    Files.getPosixFilePermissions(token));
            assertTrue(Files.readString(token).trim().length() >= 32);
        }
        // A second start keeps the token that is there.
        final String before = Files.readString(token);
        try (SwitchMain.Running r = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                token.toString(),
                "--p4runtime-port",
                "0",
                "--p4runtime-host",
                "127.0.0.2",
                "--p4runtime-token-file",
                PrivateFiles.write(dir.resolve("ops"), "operators-token-0123456789\n")
                        .toString())) {
            assertEquals(before, Files.readString(token));
            assertEquals("127.0.0.2", r.p4runtime().boundAddress().getAddress().getHostAddress());
        }
    }

    @Test
    void aTooShortTokenIsRefused() throws Exception {
        final Path token = PrivateFiles.write(dir.resolve("short"), "abc\n");
        final Outcome o = run("--port", "0", "--service-port", "0", "--token-file", token.toString());
        assertEquals(2, o.code());
        assertTrue(o.err().contains("at least 16"), o.err());
        assertThrows(IllegalArgumentException.class, () -> SwitchMain.start(System.out, "--lanes", "99"));
    }

    @Test
    void aTokenFileOthersMayReadIsRefusedAndAPrivateOneServes() throws Exception {
        final Path token = Files.writeString(dir.resolve("shared-token"), "a-token-others-may-read-0123456789\n");
        for (final String mode : new String[] {"rw-r--r--", "rw-r-----", "rw-----w-"}) {
            Files.setPosixFilePermissions(token, PosixFilePermissions.fromString(mode));
            final Outcome o = run("--port", "0", "--service-port", "0", "--token-file", token.toString());
            assertEquals(2, o.code(), mode);
            assertTrue(
                    o.err().contains("is not private (mode " + mode) && o.err().contains("chmod 600 " + token),
                    o.err());
            assertFalse(o.err().contains("\tat "), o.err());
        }
        // Positive control: the same file, private, serves.
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        try (SwitchMain.Running r = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                token.toString())) {
            assertTrue(r.jobs().port() > 0);
        }
    }

    @Test
    void theOperatorsTokenMustBeNoApplicationsToken() throws Exception {
        final Path apps = PrivateFiles.write(
                dir.resolve("apps"), "# two tenants\ntenant-one-token-0123456789\n" + "tenant-two-token-0123456789\n");
        final Path ops = PrivateFiles.write(dir.resolve("ops-same"), "tenant-two-token-0123456789\n");
        final Outcome o = run(
                "--port",
                "0",
                "--service-port",
                "0",
                "--token-file",
                apps.toString(),
                "--p4runtime-port",
                "0",
                "--p4runtime-token-file",
                ops.toString());
        assertEquals(2, o.code(), o.err());
        assertTrue(o.err().contains("--p4runtime-token-file " + ops) && o.err().contains("application token"), o.err());
        assertFalse(o.err().contains("tenant-two-token"), "the error shows the token: " + o.err());
        // Positive control: an operators' token of its own starts.
        final Path own = PrivateFiles.write(dir.resolve("ops-own"), "operators-own-token-0123456789\n");
        try (SwitchMain.Running r = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                apps.toString(),
                "--p4runtime-port",
                "0",
                "--p4runtime-token-file",
                own.toString())) {
            assertTrue(r.p4runtime().port() > 0);
        }
    }
}

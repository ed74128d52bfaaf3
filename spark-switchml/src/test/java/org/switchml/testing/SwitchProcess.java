package org.switchml.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A standalone switch ({@code SwitchMain}) as its own JVM on fixed loopback ports, so that it can be SIGKILLed
 * and started again at the same address, as the crash tests do.
 *
 * @param lanePort    lane 0's UDP port (lane 1 is the next)
 * @param servicePort the job service's TCP port
 * @param token       the token file, kept across restarts
 */
public record SwitchProcess(int lanePort, int servicePort, Path token) {
    private static final long START_MS = 120_000;

    /** A lane port pair and a job service port that are free now. */
    public static SwitchProcess onFreePorts(final Path token) throws IOException {
        for (int tries = 0; tries < 100; tries++) {
            try (DatagramSocket a = new DatagramSocket(0, InetAddress.getLoopbackAddress())) {
                final int p = a.getLocalPort();
                if (p >= 65_000) {
                    continue;
                }
                try (DatagramSocket b = new DatagramSocket(p + 1, InetAddress.getLoopbackAddress());
                        ServerSocket c = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    return new SwitchProcess(p, c.getLocalPort(), token.toAbsolutePath());
                } catch (final IOException taken) {
                    // p + 1 in use: try another pair
                }
            }
        }
        return fail("no free pair of UDP ports on loopback");
    }

    /** {@code host:port} of the job service. */
    public String serviceAddress() {
        return "127.0.0.1:" + servicePort;
    }

    /** Starts the switch, output to {@code target/NAME.log}, and waits (bounded) for its ready line. */
    public Process start(final String name) throws IOException, InterruptedException {
        final Path log = Path.of("target", name + ".log").toAbsolutePath();
        final Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        "org.switchml.service.standalone.SwitchMain",
                        "--port",
                        Integer.toString(lanePort),
                        "--lanes",
                        "2",
                        "--service-port",
                        Integer.toString(servicePort),
                        "--token-file",
                        token.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_MS);
        while (System.nanoTime() - deadline < 0) {
            final String out = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
            if (out.contains("switchml-switch: dataplane")) {
                System.out.println("[switch] " + name + " (pid " + p.pid() + "): "
                        + out.lines()
                                .filter(l -> l.contains("dataplane"))
                                .findFirst()
                                .orElse(""));
                return p;
            }
            if (!p.isAlive()) {
                fail(name + " exited (" + p.exitValue() + ") before it served: " + out);
            }
            TimeUnit.MILLISECONDS.sleep(50); // polls another process' log; bounded by the deadline
        }
        p.destroyForcibly();
        return fail(name + " did not start within " + START_MS + " ms");
    }

    /** SIGKILLs {@code p} and waits (bounded) until it is gone. */
    public static void kill(final Process p) throws InterruptedException {
        if (p != null && p.isAlive()) {
            p.destroyForcibly(); // SIGKILL
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "pid " + p.pid() + " survived SIGKILL");
        }
    }
}

package org.switchml.control;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.switchml.testing.Repo;

/**
 * A real BMv2 ({@code simple_switch_grpc}) with N hosts in their own network namespaces, set up by
 * {@code p4/bmv2-net.sh} (the commands docs/control-plane.md shows), and a primary {@link SwitchController}
 * that pushed the p4c-compiled switchml.p4 over P4Runtime (a Unix socket, so this JVM needs no address in
 * any namespace) with the host table the script printed.
 *
 * <p>Without the tools (p4c, simple_switch_grpc, nft, root) {@link #assumeTools} prints one loud line naming
 * what is missing and skips the test.
 */
final class Bmv2Bed implements AutoCloseable {
    /** The switch's dataplane address in the namespaces (bmv2-net.sh). */
    static final String SWITCH = "10.0.0.254:48864";

    final String name;
    final int hosts;
    final HostTable hostTable;
    final SwitchController controller;
    final Path json;
    private final Thread cleanup;

    private Bmv2Bed(
            final String name,
            final int hosts,
            final HostTable hostTable,
            final SwitchController controller,
            final Path json,
            final Thread cleanup) {
        this.name = name;
        this.hosts = hosts;
        this.hostTable = hostTable;
        this.controller = controller;
        this.json = json;
        this.cleanup = cleanup;
    }

    /** What the BMv2 end-to-end tests need and this machine lacks, or null. */
    static String missing() {
        final List<String> gone = new ArrayList<>();
        for (final String tool : new String[] {"p4c", "simple_switch_grpc", "ip", "nft"}) {
            if (onPath(tool) == null) {
                gone.add(tool);
            }
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            gone.add("root (ip netns)");
        }
        return gone.isEmpty() ? null : String.join(", ", gone);
    }

    static Path onPath(final String tool) {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            final Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /** Skips the calling test, loudly, when the tools are missing. */
    static void assumeTools(final String test) {
        final String m = missing();
        if (m != null) {
            final String line = "!!! BMv2 end-to-end test NOT RUN: " + test + ": missing " + m
                    + " (p4/README.md, 'Getting the tools')";
            System.out.println(line);
            if (System.getenv("SWITCHML_REQUIRE_BMV2") != null) {
                throw new AssertionError(line + "; SWITCHML_REQUIRE_BMV2 is set (.ci/run found the P4 tools)");
            }
            Assumptions.assumeTrue(false, line);
        }
    }

    /** p4/compile.sh into target/p4 (fails when the committed P4Info is not p4c's); the BMv2 JSON. */
    static Path compile() throws IOException, InterruptedException {
        final Path out = Path.of("target", "p4").toAbsolutePath();
        final Run r = run(
                Map.of("OUT", out.toString()),
                120,
                "bash",
                Repo.p4Dir().resolve("compile.sh").toString());
        if (r.code != 0) {
            throw new AssertionError("p4/compile.sh failed (" + r.code + "):\n" + r.output);
        }
        return out.resolve("switchml.json");
    }

    /**
     * Brings up a topology with {@code hosts} hosts, named {@code prefix} + this JVM's pid (so concurrent
     * runs never meet), after removing those of killed runs ({@code bmv2-net.sh gc}).
     */
    static Bmv2Bed up(final String prefix, final int hosts) throws IOException, InterruptedException {
        final String name = prefix + ProcessHandle.current().pid();
        final Path json = compile();
        final String script = Repo.p4Dir().resolve("bmv2-net.sh").toString();
        final Path sock = Path.of(System.getProperty("java.io.tmpdir"), "switchml-bmv2", name, "p4runtime.sock");
        final Thread cleanup = new Thread(() -> down(name), "bmv2-net-down-" + name);
        Runtime.getRuntime().addShutdownHook(cleanup);
        run(Map.of(), 120, "bash", script, "gc"); // topologies of killed runs
        final Run r = run(
                Map.of(),
                60,
                "bash",
                script,
                "up",
                name,
                Integer.toString(hosts),
                "--grpc",
                "unix:" + sock,
                "--owner",
                Long.toString(ProcessHandle.current().pid()));
        if (r.code != 0) {
            down(name);
            throw new AssertionError("bmv2-net.sh up failed (" + r.code + "):\n" + r.output);
        }
        final HostTable table = HostTable.parse(r.stdout, "bmv2-net.sh up");
        SwitchController c = null;
        try {
            c = SwitchController.connect(ControllerOptions.of("unix:" + sock).withHosts(table));
            c.setPipeline(PipelineConfig.bmv2(json));
            return new Bmv2Bed(name, hosts, table, c, json, cleanup);
        } catch (final RuntimeException e) {
            if (c != null) {
                c.close();
            }
            down(name);
            throw e;
        }
    }

    /** {@code ip netns exec NAME-hI java -cp <this JVM's class path> mainClass args}, output to {@code log}. */
    Process startJvm(final int host, final Path log, final String mainClass, final String... args) throws IOException {
        final List<String> cmd = new ArrayList<>(List.of(
                "ip",
                "netns",
                "exec",
                name + "-h" + host,
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                mainClass));
        cmd.addAll(List.of(args));
        Files.createDirectories(log.getParent());
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    /** Every host drops {@code pct} % of the UDP datagrams it sends and receives (0: none). */
    void loss(final int pct) throws IOException, InterruptedException {
        final Run r = run(
                Map.of(),
                30,
                "bash",
                Repo.p4Dir().resolve("bmv2-net.sh").toString(),
                "loss",
                name,
                Integer.toString(pct));
        if (r.code != 0) {
            throw new AssertionError("bmv2-net.sh loss failed:\n" + r.output);
        }
    }

    /** Per host (1-based): {datagrams dropped on input, on output} by the loss rules. */
    Map<Integer, long[]> lossCounters() throws IOException, InterruptedException {
        final Run r =
                run(Map.of(), 30, "bash", Repo.p4Dir().resolve("bmv2-net.sh").toString(), "loss-counters", name);
        if (r.code != 0) {
            throw new AssertionError("bmv2-net.sh loss-counters failed:\n" + r.output);
        }
        final Map<Integer, long[]> out = new HashMap<>();
        for (final String line : r.stdout.split("\n")) {
            final String[] f = line.trim().split("\\s+");
            if (f.length == 5 && f[0].startsWith("h")) {
                out.put(Integer.parseInt(f[0].substring(1)), new long[] {Long.parseLong(f[2]), Long.parseLong(f[4])});
            }
        }
        return out;
    }

    static void down(final String name) {
        try {
            run(Map.of(), 60, "bash", Repo.p4Dir().resolve("bmv2-net.sh").toString(), "down", name);
        } catch (final IOException | InterruptedException | RuntimeException e) {
            System.out.println("[bmv2] cleanup of " + name + " failed: " + e);
        }
    }

    @Override
    public void close() {
        try {
            controller.close();
        } finally {
            down(name);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (final IllegalStateException ignored) {
                // Already shutting down: the hook runs anyway.
            }
        }
    }

    /** A finished command. */
    record Run(int code, String stdout, String output) {}

    /** Runs a command, bounded; stdout separately, and stdout+stderr for messages. */
    static Run run(final Map<String, String> env, final long timeoutS, final String... cmd)
            throws IOException, InterruptedException {
        final Path out = Files.createTempFile("bmv2-cmd", ".out");
        final Path err = Files.createTempFile("bmv2-cmd", ".err");
        try {
            final ProcessBuilder pb =
                    new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().putAll(env);
            final Process p = pb.start();
            if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(String.join(" ", cmd) + " did not finish within " + timeoutS + " s");
            }
            final String so = Files.readString(out, StandardCharsets.UTF_8);
            return new Run(p.exitValue(), so, so + Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}

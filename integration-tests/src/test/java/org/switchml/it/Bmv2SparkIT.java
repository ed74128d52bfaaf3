package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark through a real BMv2: {@code p4/bmv2-net.sh up sp<pid> 3 --mgmt} gives a BMv2 switch and three hosts,
 * each in its own network namespace with a data interface on a switch port (10.0.0.i) and a management one
 * (192.168.77.i) for Spark's own traffic. A standalone Master and the driver run in the switch's namespace
 * (P4Runtime at 127.0.0.1:9559 there), one Worker per host namespace, so every executor's worker socket
 * (spark.switchml.worker.host=10.0.0.0/24) sits behind its own switch port. The switch's controller
 * ({@code switchml-controller}, in the switch's namespace) pushes the compiled switchml.p4, looks the executors up
 * in the host table, and serves the job service the driver asks for jobs (spark.switchml.jobService.address);
 * DeployCheckApp's SwitchMLAggregator sum and ReplicatedLoop must match treeAggregate and the driver loop,
 * and the P4 counters, read over P4Runtime by the controller and reported by its service, must show the packets
 * and balance. The same app then runs with
 * the embedded software switch on the same cluster, and its counters must balance the same way.
 *
 * <p>Skipped, with one loud line, without p4c, simple_switch_grpc or root.
 */
class Bmv2SparkIT {
    // Named after this JVM, so concurrent runs never meet; `bmv2-net.sh gc` removes those of killed runs.
    private static final String NET = "sp" + ProcessHandle.current().pid();
    private static final int HOSTS = 3;
    private static final long START_MS = 120_000;
    private static final long RUN_MS = 300_000;
    private static final long SEED = Long.getLong("switchml.seed", 20261201L);
    private static final List<Jvm> cluster = new ArrayList<>();
    private static Path sparkHome;
    private static Path libraryJar;
    private static Path appJar;
    private static Path work;
    private static Path json;
    private static Path hosts;
    private static List<String> jvmFlags;
    private static String master;
    private static Path repo;
    private static Thread cleanup;

    @BeforeAll
    static void up() throws Exception {
        final List<String> gone = new ArrayList<>();
        for (final String tool : new String[] {"p4c", "simple_switch_grpc", "ip"}) {
            if (!onPath(tool)) {
                gone.add(tool);
            }
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            gone.add("root (ip netns)");
        }
        if (!gone.isEmpty()) {
            final String line = "!!! BMv2 end-to-end test NOT RUN: Bmv2SparkIT: missing " + String.join(", ", gone)
                    + " (p4/README.md, 'Getting the tools')";
            System.out.println(line);
            if (System.getenv("SWITCHML_REQUIRE_BMV2") != null) {
                throw new AssertionError(line + "; SWITCHML_REQUIRE_BMV2 is set (.ci/run found the P4 tools)");
            }
            Assumptions.assumeTrue(false, line);
        }
        System.out.println("[it] seed " + SEED + " (-Dswitchml.seed=" + SEED + " repeats this run)");
        sparkHome = Path.of(System.getProperty("switchml.it.sparkHome"));
        libraryJar = Path.of(System.getProperty("switchml.it.libraryJar"));
        appJar = Path.of(System.getProperty("switchml.it.appJar"));
        work = Path.of(System.getProperty("switchml.it.work")).resolve("bmv2");
        jvmFlags = Arrays.asList(
                System.getProperty("switchml.it.jvmFlags", "").trim().split("\\s+"));
        repo = Path.of("").toAbsolutePath().getParent();
        Files.createDirectories(work);

        final Run compile = run(
                Map.of("OUT", work.resolve("p4").toString()),
                120,
                "bash",
                repo.resolve("p4/compile.sh").toString());
        assertEquals(0, compile.code, "p4/compile.sh:\n" + compile.output);
        json = work.resolve("p4/switchml.json");
        cleanup = new Thread(Bmv2SparkIT::down, "bmv2-net-down-" + NET);
        Runtime.getRuntime().addShutdownHook(cleanup);
        run(Map.of(), 120, "bash", repo.resolve("p4/bmv2-net.sh").toString(), "gc");
        final Run net = run(
                Map.of(),
                60,
                "bash",
                repo.resolve("p4/bmv2-net.sh").toString(),
                "up",
                NET,
                Integer.toString(HOSTS),
                "--mgmt",
                "--owner",
                Long.toString(ProcessHandle.current().pid()));
        assertEquals(0, net.code, "bmv2-net.sh up:\n" + net.output);
        hosts = Files.writeString(work.resolve("hosts.txt"), net.stdout);

        final List<String> daemon = new ArrayList<>(jvmFlags);
        daemon.addAll(List.of("-Xmx256m", "-cp", sparkHome.resolve("jars") + "/*"));
        final Jvm m = Jvm.start(
                "master",
                work.resolve("master.log"),
                env("192.168.77.254"),
                netns("sw"),
                daemon,
                "org.apache.spark.deploy.master.Master",
                List.of("--host", "192.168.77.254", "--port", "0", "--webui-port", "0"));
        cluster.add(m);
        master = m.await("Starting Spark master at (spark://192\\.168\\.77\\.254:\\d+)", START_MS)
                .group(1);
        for (int h = 1; h <= HOSTS; h++) {
            cluster.add(Jvm.start(
                    "worker-h" + h,
                    work.resolve("worker-h" + h + ".log"),
                    env("192.168.77." + h),
                    netns("h" + h),
                    daemon,
                    "org.apache.spark.deploy.worker.Worker",
                    List.of(
                            "--host",
                            "192.168.77." + h,
                            "--cores",
                            "2",
                            "--memory",
                            "2g",
                            "--webui-port",
                            "0",
                            "--work-dir",
                            work.resolve("worker-h" + h).toString(),
                            master)));
        }
        for (int h = 1; h <= HOSTS; h++) {
            cluster.get(h).await("Successfully registered with master", START_MS);
        }
        System.out.println("[it] BMv2 and a standalone cluster in namespaces: " + master + ", " + HOSTS
                + " workers behind switch ports 1.." + HOSTS);
    }

    private static boolean onPath(final String tool) {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(dir.isEmpty() ? "." : dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private static List<String> netns(final String host) {
        return List.of("ip", "netns", "exec", NET + "-" + host);
    }

    private static Map<String, String> env(final String localIp) {
        return Map.of(
                "SPARK_HOME",
                sparkHome.toString(),
                "SPARK_LOCAL_IP",
                localIp,
                "SPARK_SCALA_VERSION",
                "2.13",
                "SPARK_LOG_DIR",
                work.resolve("logs").toString());
    }

    @AfterAll
    static void stop() {
        for (int i = cluster.size() - 1; i >= 0; i--) {
            cluster.get(i).close();
        }
        if (cleanup != null) {
            down();
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (final IllegalStateException ignored) {
                // Shutting down already: the hook runs.
            }
        }
    }

    private static void down() {
        try {
            run(Map.of(), 60, "bash", repo.resolve("p4/bmv2-net.sh").toString(), "down", NET);
        } catch (final IOException | InterruptedException | RuntimeException e) {
            System.out.println("[it] cleanup of " + NET + " failed: " + e);
        }
    }

    /** Starts DeployCheckApp from the switch's namespace with {@code conf}. */
    private static Jvm startDriver(final String name, final List<String> conf) throws Exception {
        final List<String> jvm = new ArrayList<>(jvmFlags);
        jvm.addAll(List.of("-Xmx768m", "-cp", sparkHome.resolve("jars") + "/*"));
        final List<String> args = new ArrayList<>(List.of(
                "--master",
                master,
                "--deploy-mode",
                "client",
                "--name",
                name,
                "--jars",
                libraryJar.toString(),
                "--conf",
                "spark.plugins=org.switchml.spark.SwitchMLPlugin",
                "--conf",
                "spark.driver.host=192.168.77.254",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.executor.cores=1",
                "--conf",
                "spark.cores.max=" + HOSTS,
                "--conf",
                "spark.executor.memory=512m",
                "--conf",
                "spark.locality.wait=0s"));
        for (final String c : conf) {
            args.add("--conf");
            args.add(c);
        }
        args.addAll(List.of(
                "--class",
                DeployCheckApp.class.getName(),
                appJar.toString(),
                "1200",
                "2000",
                "6",
                Integer.toString(HOSTS),
                Long.toString(SEED)));
        return Jvm.start(
                name,
                work.resolve(name + ".log"),
                env("192.168.77.254"),
                netns("sw"),
                jvm,
                "org.apache.spark.deploy.SparkSubmit",
                args);
    }

    /** Runs DeployCheckApp from the switch's namespace; returns its counters line's values. */
    private static Map<String, Long> submit(final String name, final List<String> conf) throws Exception {
        final long t0 = System.nanoTime();
        try (Jvm driver = startDriver(name, conf)) {
            final int code = driver.awaitExit(RUN_MS);
            final String out = driver.output();
            System.out.println(
                    "[it] " + name + " exited " + code + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            out.lines().filter(l -> l.startsWith("DEPLOY-CHECK")).forEach(l -> System.out.println("[it]   " + l));
            assertEquals(0, code, name + " failed:\n" + driver.tail(80));
            assertTrue(out.contains("DEPLOY-CHECK OK viaSwitch=true workers=" + HOSTS), driver.tail(80));
            final Matcher m =
                    Pattern.compile("DEPLOY-CHECK COUNTERS target=(\\S+) (.*)").matcher(out);
            assertTrue(m.find(), "no counters line:\n" + driver.tail(40));
            final Map<String, Long> counters = new HashMap<>();
            for (final String kv : m.group(2).trim().split("\\s+")) {
                final String[] p = kv.split("=");
                counters.put(p[0], Long.parseLong(p[1]));
            }
            return counters;
        }
    }

    /** in − out = STALE_SEQ + DUPLICATE_PENDING (p4/README.md, "Counters"); no job saw a bad packet. */
    private static void checkBalance(final String what, final Map<String, Long> c) {
        assertTrue(c.get("in") > 0 && c.get("out") > 0, what + ": no packets counted: " + c);
        assertEquals(
                c.get("STALE_SEQ") + c.get("DUPLICATE_PENDING"),
                c.get("in") - c.get("out"),
                what + ": packets in - out must be STALE_SEQ + DUPLICATE_PENDING: " + c);
        for (final String bad : new String[] {
            "BAD_SECRET", "STALE_GENERATION", "UNKNOWN_SENDER", "WRONG_K", "BAD_SLOT", "switchMALFORMED"
        }) {
            assertEquals(0L, c.get(bad), what + ": " + bad + ": " + c);
        }
    }

    @Test
    void sparkAggregatesAndLoopsThroughBmv2AndTwoApplicationsShareIt() throws Exception {
        final Path token = work.resolve("switch.token");
        final List<String> shared = List.of(
                "spark.switchml.jobService.address=127.0.0.1:9560",
                "spark.switchml.auth.tokenFile=" + token,
                "spark.switchml.worker.host=10.0.0.0/24",
                "spark.switchml.fallback=fail",
                // BMv2 queues packets for tens of ms: the default first timeout (20 ms) would mostly retransmit.
                "spark.switchml.retransmitTimeout=200ms");
        final Map<String, Long> c;
        // The controller as an operator starts it: its launcher, from the built jars, in the switch's namespace.
        try (Jvm controller = Jvm.launch(
                "switchml-controller",
                work.resolve("controller.log"),
                Map.of("CONTROLLER_HEAP", "384m"),
                netns("sw"),
                "switchml-controller",
                List.of(
                        "--p4runtime",
                        "127.0.0.1:9559",
                        "--p4-json",
                        json.toString(),
                        "--hosts",
                        hosts.toString(),
                        "--dataplane",
                        "10.0.0.254:48864",
                        "--service-port",
                        "9560",
                        "--token-file",
                        token.toString()))) {
            System.out.println("[it] "
                    + controller.await("jobs 127\\.0\\.0\\.1:9560", START_MS).group());
            c = submit("submit-bmv2", shared);
            // Two applications at once, each with an executor behind every switch port: both through BMv2.
            final List<Jvm> both = List.of(startDriver("submit-bmv2-a", shared), startDriver("submit-bmv2-b", shared));
            try {
                for (final Jvm d : both) {
                    final int code = d.awaitExit(RUN_MS);
                    d.output()
                            .lines()
                            .filter(l -> l.startsWith("DEPLOY-CHECK OK"))
                            .forEach(l -> System.out.println("[it]   " + l));
                    assertEquals(0, code, d.tail(80));
                    assertTrue(
                            d.output().contains("DEPLOY-CHECK OK viaSwitch=true workers=" + HOSTS)
                                    && d.output().contains("fallbacks=0"),
                            d.tail(80));
                }
            } finally {
                for (final Jvm d : both) {
                    d.close();
                }
            }
        }
        checkBalance("BMv2", c);
        // BMv2 saw SwitchML only: the hosts reach each other and the driver over the management network.
        assertEquals(0L, c.get("notSwitchml"), "BMv2 saw non-SwitchML frames: " + c);
        final String log = Files.readString(work.resolve("submit-bmv2.log"), StandardCharsets.UTF_8);
        assertTrue(log.contains("DEPLOY-CHECK COUNTERS target=BMV2"), "the counters were not read from BMv2");
    }

    @Test
    void theSameAppWithTheEmbeddedSoftwareSwitchBalancesTheSameWay() throws Exception {
        // The software switch inside the driver, reached over the management network.
        checkBalance("software switch", submit("submit-embedded", List.of()));
    }

    /** A finished command: exit code, stdout, and stdout+stderr. */
    private record Run(int code, String stdout, String output) {}

    private static Run run(final Map<String, String> env, final long timeoutS, final String... cmd)
            throws IOException, InterruptedException {
        final Path out = Files.createTempFile("bmv2-it", ".out");
        final Path err = Files.createTempFile("bmv2-it", ".err");
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

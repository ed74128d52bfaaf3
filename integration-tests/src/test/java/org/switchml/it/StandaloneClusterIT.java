package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The way users run spark-switchml: a Spark standalone Master and two Workers, each a separate JVM
 * started from Spark's own jars (a Spark 4.0.1 classpath with spark-sql, spark-mllib and protobuf-java
 * 4), and an application submitted through {@code org.apache.spark.deploy.SparkSubmit} with the shaded
 * spark-switchml jar on {@code --jars}. Once with the plugin's embedded switch, once with a standalone
 * switch process ({@code switchml-switch}) named by address.
 */
class StandaloneClusterIT {
    private static final long START_MS = 120_000;
    private static final long RUN_MS = 300_000;
    private static Path sparkHome;
    private static Path libraryJar;
    private static Path appJar;
    private static Path work;
    private static List<String> jvmFlags;
    private static Map<String, String> env;
    private static final List<Jvm> cluster = new ArrayList<>();
    private static String master;
    private static final long SEED = Long.getLong("switchml.seed", 20261130L);

    @BeforeAll
    static void startCluster() throws Exception {
        System.out.println("[it] seed " + SEED + " (-Dswitchml.seed=" + SEED + " repeats this run)");
        sparkHome = required("switchml.it.sparkHome");
        libraryJar = required("switchml.it.libraryJar");
        appJar = required("switchml.it.appJar");
        work = Path.of(System.getProperty("switchml.it.work"));
        deleteTree(work); // the executor-log checks below must see this run's logs only
        jvmFlags = Arrays.asList(
                System.getProperty("switchml.it.jvmFlags", "").trim().split("\\s+"));
        final List<String> jars;
        try (Stream<Path> s = Files.list(sparkHome.resolve("jars"))) {
            jars = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        // The point of this test: our jar meets Spark's own protobuf 4 and Guava, and spark-sql and MLlib.
        for (final String needed :
                new String[] {"protobuf-java-4.", "guava-", "spark-sql_", "spark-mllib_", "spark-core_"}) {
            assertTrue(jars.stream().anyMatch(j -> j.startsWith(needed)), "Spark's jars lack " + needed + "*: " + jars);
        }
        System.out.println(
                "[it] Spark classpath: " + jars.size() + " jars from " + sparkHome.resolve("jars") + ", among them "
                        + jars.stream()
                                .filter(j -> j.startsWith("protobuf") || j.startsWith("guava"))
                                .toList());
        env = Map.of(
                "SPARK_HOME",
                sparkHome.toString(),
                "SPARK_LOCAL_IP",
                "127.0.0.1",
                "SPARK_SCALA_VERSION",
                "2.13",
                "SPARK_LOG_DIR",
                work.resolve("logs").toString());
        final List<String> daemon = new ArrayList<>(jvmFlags);
        daemon.addAll(List.of("-Xmx256m", "-cp", sparkHome.resolve("jars") + "/*"));
        final Jvm m = Jvm.start(
                "master",
                work.resolve("master.log"),
                env,
                daemon,
                "org.apache.spark.deploy.master.Master",
                List.of("--host", "127.0.0.1", "--port", "0", "--webui-port", "0"));
        cluster.add(m);
        final Matcher url = m.await("Starting Spark master at (spark://127\\.0\\.0\\.1:\\d+)", START_MS);
        master = url.group(1);
        for (int w = 0; w < 2; w++) {
            final Jvm worker = Jvm.start(
                    "worker-" + w,
                    work.resolve("worker-" + w + ".log"),
                    env,
                    daemon,
                    "org.apache.spark.deploy.worker.Worker",
                    List.of(
                            "--host",
                            "127.0.0.1",
                            "--cores",
                            "2",
                            "--memory",
                            "1536m",
                            "--webui-port",
                            "0",
                            "--work-dir",
                            work.resolve("worker-" + w).toString(),
                            master));
            cluster.add(worker);
        }
        for (int w = 0; w < 2; w++) {
            cluster.get(1 + w).await("Successfully registered with master", START_MS);
        }
        System.out.println("[it] standalone cluster up: " + master + " with 2 workers x 2 cores");
    }

    private static void deleteTree(final Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (final Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static Path required(final String property) {
        final String v = System.getProperty(property);
        assertTrue(
                v != null && Files.exists(Path.of(v)),
                property + " = " + v + " does not exist: run 'mvn verify' "
                        + "from the repository root, which builds spark-dist and the shaded spark-switchml jar first");
        return Path.of(v);
    }

    @AfterAll
    static void stopCluster() {
        for (int i = cluster.size() - 1; i >= 0; i--) {
            cluster.get(i).close();
        }
    }

    /** Runs the app through SparkSubmit with {@code conf} and returns the driver's output after checking it. */
    private static String submit(final String name, final List<String> conf) throws Exception {
        final List<String> jvm = new ArrayList<>(jvmFlags);
        jvm.addAll(List.of("-Xmx1g", "-cp", sparkHome.resolve("jars") + "/*"));
        final List<String> args = new ArrayList<>(List.of(
                "--master",
                master,
                "--deploy-mode",
                "client",
                "--jars",
                libraryJar.toString(),
                "--conf",
                "spark.plugins=org.switchml.spark.SwitchMLPlugin",
                "--conf",
                "spark.driver.host=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.executor.cores=2",
                "--conf",
                "spark.cores.max=4",
                "--conf",
                "spark.executor.memory=1g",
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
                "2000",
                "10000",
                "50",
                "2",
                Long.toString(SEED)));
        final long t0 = System.nanoTime();
        try (Jvm driver =
                Jvm.start(name, work.resolve(name + ".log"), env, jvm, "org.apache.spark.deploy.SparkSubmit", args)) {
            final int code = driver.awaitExit(RUN_MS);
            final String out = driver.output();
            System.out.println(
                    "[it] " + name + " exited " + code + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            out.lines()
                    .filter(l -> l.startsWith("DEPLOY-CHECK") || l.contains("spark-switchml"))
                    .forEach(l -> System.out.println("[it]   " + l));
            assertEquals(0, code, name + " failed:\n" + driver.tail(80));
            assertTrue(out.contains("DEPLOY-CHECK OK viaSwitch=true workers=2"), driver.tail(80));
            assertFalse(
                    out.contains("Vulnerable protobuf generated type"),
                    "protobuf gencode warnings in the driver's output");
            return out;
        }
    }

    /** Every executor log of the cluster's work dirs must be free of protobuf warnings and linkage errors. */
    private static void checkExecutorLogs() throws IOException {
        final List<Path> logs;
        try (Stream<Path> s = Files.walk(work)) {
            logs = s.filter(p -> p.getFileName().toString().equals("stderr")).toList();
        }
        assertFalse(logs.isEmpty(), "no executor logs under " + work);
        for (final Path p : logs) {
            final String text = Files.readString(p);
            assertFalse(text.contains("Vulnerable protobuf generated type"), "protobuf warnings in " + p);
            assertFalse(
                    text.contains("NoClassDefFoundError")
                            || text.contains("NoSuchMethodError")
                            || text.contains("ClassNotFoundException"),
                    "linkage error in " + p);
        }
    }

    @Test
    void theEmbeddedSwitchAggregatesForExecutorsInSeparateJvms() throws Exception {
        submit("submit-embedded", List.of());
        checkExecutorLogs();
    }

    @Test
    void aStandaloneSwitchProcessNamedByAddressAggregates() throws Exception {
        final List<String> jvm =
                new ArrayList<>(List.of("-Xmx512m", "-cp", libraryJar + ":" + sparkHome.resolve("jars") + "/*"));
        final Path token = work.resolve("switch.token");
        try (Jvm sw = Jvm.start(
                "switchml-switch",
                work.resolve("switch.log"),
                Map.of(),
                jvm,
                "org.switchml.service.standalone.SwitchMain",
                List.of("--port", "0", "--lanes", "2", "--service-port", "0", "--token-file", token.toString()))) {
            final Matcher ready = sw.await("dataplane (127\\.0\\.0\\.1:[\\d,]+) jobs (127\\.0\\.0\\.1:\\d+)", START_MS);
            System.out.println("[it] " + ready.group());
            submit(
                    "submit-standalone-switch",
                    List.of(
                            "spark.switchml.jobService.address=" + ready.group(2),
                            "spark.switchml.auth.tokenFile=" + token));
            assertTrue(sw.process.isAlive(), "the switch process died:\n" + sw.tail(40));
            assertFalse(sw.output().contains("Vulnerable protobuf generated type"), sw.output());
        }
    }
}

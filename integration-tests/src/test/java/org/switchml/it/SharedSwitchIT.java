package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.service.JobServiceClient;
import org.switchml.service.JobServiceException;
import org.switchml.service.Occupancy;

/**
 * One standalone switch (started by {@code bin/switchml-switch}, its own JVM) shared by several Spark applications
 * at once, each submitted with the shaded jar on {@code --jars} and the rack's token (one of them through
 * {@code bin/switchml-submit}, which adds the jar and the plugin, the others through {@code SparkSubmit}): three
 * applications run together and every aggregation of each goes through the switch (zero fallbacks), while a greedy
 * tenant with a token of its own asks for every slot, then for 128 sessions, then for as many full-size jobs as it
 * can, and is refused each time with the quota named and no other tenant's name; a fourth application, SIGKILLed in the middle of a SwitchMLLogisticRegression fit while the
 * others run, loses its session and jobs within three renewal intervals while the others keep theirs; a fifth with
 * the wrong token is refused and changes nothing.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class SharedSwitchIT {
    private static final long START_MS = 120_000;
    private static final long RUN_MS = 600_000;
    // Two seconds (a 5 s lease): five JVMs starting on two cores can starve a live driver's renewals for 2.5 s.
    private static final long RENEW_MS = 2_000;
    private static final long SEED = Long.getLong("switchml.seed", 20261202L);

    @Test
    void threeApplicationsShareOneSwitchAKilledOneLosesItsJobsAndAWrongTokenIsRefused() throws Exception {
        System.out.println("[it] seed " + SEED + " (-Dswitchml.seed=" + SEED + " repeats this run)");
        final Path sparkHome = Path.of(System.getProperty("switchml.it.sparkHome"));
        final Path libraryJar = Path.of(System.getProperty("switchml.it.libraryJar"));
        final Path appJar = Path.of(System.getProperty("switchml.it.appJar"));
        final Path work = Path.of(System.getProperty("switchml.it.work") + "-shared");
        Files.createDirectories(work);
        final List<String> jvmFlags = Arrays.asList(
                System.getProperty("switchml.it.jvmFlags", "").trim().split("\\s+"));
        // The switch's token file: the rack's applications' token, and the greedy tenant's own. Each gets its own copy.
        final String rackToken = "rack-applications-token-" + SEED;
        final String greedyToken = "greedy-tenant-token-" + SEED;
        final Path tokens = privateFile(work.resolve("switch.tokens"), rackToken + "\n" + greedyToken + "\n");
        final Path token = privateFile(work.resolve("rack.token"), rackToken + "\n");
        final Path wrongToken = privateFile(work.resolve("wrong.token"), "not-the-rack-token-0123456789\n");
        final Map<String, String> env = Map.of(
                "SPARK_HOME", sparkHome.toString(), "SPARK_LOCAL_IP", "127.0.0.1", "SPARK_SCALA_VERSION", "2.13");

        // The switch as an operator starts it: its launcher, from the built jars.
        try (Jvm sw = Jvm.launch(
                "switchml-switch",
                work.resolve("switch.log"),
                Map.of("SWITCH_HEAP", "512m"),
                List.of(),
                "switchml-switch",
                List.of(
                        "--port",
                        "0",
                        "--lanes",
                        "2",
                        "--service-port",
                        "0",
                        "--token-file",
                        tokens.toString(),
                        "--renew-interval-ms",
                        Long.toString(RENEW_MS)))) {
            final Matcher ready = sw.await("jobs 127\\.0\\.0\\.1:(\\d+)", START_MS);
            System.out.println("[it] " + ready.group());
            final String service = "127.0.0.1:" + ready.group(1);
            try (JobServiceClient operator = JobServiceClient.connect(
                    "127.0.0.1",
                    Integer.parseInt(ready.group(1)),
                    TlsFiles.client("", "", "", BearerToken.read(token), "127.0.0.1", "the job service"))) {
                // Connected, and empty, before five JVMs start and take the machine's CPUs.
                assertEquals(0, operator.describe().sessions());
                final List<Jvm> apps = new ArrayList<>();
                GreedyTenant greedy = null;
                try {
                    // The victim first: fit after fit, until killed. Once it iterates through the switch, the three
                    // others start, and it is killed while all four hold a session.
                    final Jvm victim = submitFit(work, env, jvmFlags, sparkHome, libraryJar, appJar, service, token);
                    apps.add(victim);
                    System.out.println("[it] victim: "
                            + victim.await("FIT-APP fit 1 iteration 3/\\d+", RUN_MS)
                                    .group());
                    for (int i = 0; i < 3; i++) {
                        apps.add(
                                submit("app-" + i, work, env, jvmFlags, sparkHome, libraryJar, appJar, service, token));
                    }
                    awaitOccupancy(operator, o -> o.sessions() == 4, "four applications with a session", START_MS);
                    assertTrue(
                            victim.process.isAlive(),
                            "the victim ended before it could be killed:\n" + victim.tail(20));
                    greedy = GreedyTenant.run(
                            Integer.parseInt(ready.group(1)),
                            BearerToken.of(greedyToken),
                            RENEW_MS,
                            List.of("victim-fit", "app-0", "app-1", "app-2"));
                    // Killed in the iterations of a fit that starts after the others joined.
                    final List<String> fitLines = victim.output()
                            .lines()
                            .filter(l -> l.startsWith("FIT-APP fit"))
                            .toList();
                    final int next =
                            Integer.parseInt(fitLines.get(fitLines.size() - 1).split(" ")[2]) + 1;
                    victim.await("FIT-APP fit " + next + " iteration 2/", START_MS);
                    final long killed = System.nanoTime();
                    victim.process.destroyForcibly(); // SIGKILL: no session close, no job removal
                    final List<String> last = victim.output()
                            .lines()
                            .filter(l -> l.startsWith("FIT-APP fit"))
                            .toList();
                    System.out.println("[it] victim killed after: " + last.get(last.size() - 1));
                    assertTrue(victim.process.waitFor(30, TimeUnit.SECONDS), "the victim survived SIGKILL");
                    awaitOccupancy(operator, o -> o.leasesExpired() == 1, "the victim's lease to lapse", 10 * RENEW_MS);
                    final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                    System.out.println("[it] the killed driver's session and jobs were removed " + ms + " ms after "
                            + "SIGKILL (renewal interval " + RENEW_MS + " ms)");
                    assertTrue(ms <= 3 * RENEW_MS, "lease lapsed after " + ms + " ms > 3 renewal intervals");

                    final Jvm refused = submitWith(
                            "wrong-token",
                            work,
                            env,
                            jvmFlags,
                            sparkHome,
                            libraryJar,
                            appJar,
                            service,
                            wrongToken,
                            "fail",
                            2_000);
                    assertNotEquals(0, refused.awaitExit(RUN_MS), refused.tail(40));
                    assertTrue(
                            refused.output().contains("PERMISSION_DENIED")
                                    && refused.output().contains("refused the bearer token"),
                            refused.tail(40));

                    for (final Jvm app : apps.subList(1, apps.size())) {
                        final int code = app.awaitExit(RUN_MS);
                        final String out = app.output();
                        out.lines()
                                .filter(l -> l.startsWith("DEPLOY-CHECK OK"))
                                .forEach(l -> System.out.println("[it]   " + l));
                        assertEquals(0, code, app.tail(60));
                        assertTrue(
                                out.contains("DEPLOY-CHECK OK viaSwitch=true") && out.contains("fallbacks=0"),
                                app.tail(60));
                    }
                    assertTrue(
                            greedy.lostReason() == null, "the greedy tenant's sessions lapsed: " + greedy.lostReason());
                } finally {
                    for (final Jvm app : apps) {
                        app.close();
                    }
                    if (greedy != null) {
                        greedy.close();
                    }
                }
                final Occupancy after = operator.describe();
                assertEquals(0, after.jobs(), "every job is gone once its application stopped: " + after);
                assertEquals(0, after.sessions(), after.toString());
                assertEquals(1, after.leasesExpired(), after.toString());
                final long in = operator.totals().jobs().packetsIn();
                assertTrue(in > 0, "no packets through the switch");
                System.out.println("[it] switch totals: " + operator.totals());
            }
            assertTrue(sw.process.isAlive(), "the switch died:\n" + sw.tail(40));
        }
    }

    /** Writes {@code text} to a file only its owner may read, as token files must be. */
    private static Path privateFile(final Path file, final String text) throws IOException {
        Files.deleteIfExists(file);
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private static void awaitOccupancy(
            final JobServiceClient c, final Predicate<Occupancy> done, final String what, final long limitMs) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        Occupancy o = null;
        boolean first = true;
        while (o == null || !done.test(o)) {
            if (System.nanoTime() > end) {
                throw new AssertionError("no " + what + " within " + limitMs + " ms: " + o);
            }
            if (!first) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // bounded polling of the switch's own state
            }
            first = false;
            try {
                o = c.describe();
            } catch (final JobServiceException e) {
                // While JVMs start on a 2-core machine one call may miss its deadline; the overall bound still holds.
                if (e.kind() != JobServiceException.Kind.UNREACHABLE) {
                    throw e;
                }
                System.out.println("[it] " + e.getMessage());
            }
        }
    }

    private static Jvm submit(
            final String name,
            final Path work,
            final Map<String, String> env,
            final List<String> jvmFlags,
            final Path sparkHome,
            final Path libraryJar,
            final Path appJar,
            final String service,
            final Path token)
            throws Exception {
        return submitWith(name, work, env, jvmFlags, sparkHome, libraryJar, appJar, service, token, "fail", 2_000);
    }

    /** Starts FitApp (the drop-in estimator, checkpointing every two iterations) against the shared switch. */
    private static Jvm submitFit(
            final Path work,
            final Map<String, String> env,
            final List<String> jvmFlags,
            final Path sparkHome,
            final Path libraryJar,
            final Path appJar,
            final String service,
            final Path token)
            throws Exception {
        return sparkSubmit(
                "victim-fit",
                work,
                env,
                jvmFlags,
                sparkHome,
                libraryJar,
                service,
                token,
                "fail",
                FitApp.class,
                appJar,
                "2000",
                "100",
                "100",
                "0",
                Long.toString(SEED));
    }

    /** Starts DeployCheckApp on {@code local[2]} over {@code rows} rows against the shared switch. */
    private static Jvm submitWith(
            final String name,
            final Path work,
            final Map<String, String> env,
            final List<String> jvmFlags,
            final Path sparkHome,
            final Path libraryJar,
            final Path appJar,
            final String service,
            final Path token,
            final String fallback,
            final int rows)
            throws Exception {
        return sparkSubmit(
                name,
                work,
                env,
                jvmFlags,
                sparkHome,
                libraryJar,
                service,
                token,
                fallback,
                DeployCheckApp.class,
                appJar,
                Integer.toString(rows),
                "20000",
                "8",
                "1",
                Long.toString(SEED));
    }

    /** SparkSubmit of {@code main} on {@code local[2]} with the library on {@code --jars}, against the shared switch. */
    private static Jvm sparkSubmit(
            final String name,
            final Path work,
            final Map<String, String> env,
            final List<String> jvmFlags,
            final Path sparkHome,
            final Path libraryJar,
            final String service,
            final Path token,
            final String fallback,
            final Class<?> main,
            final Path appJar,
            final String... appArgs)
            throws Exception {
        // app-0 goes through bin/switchml-submit, which adds the jar and the plugin itself; the others spell them out.
        final boolean launcher = name.equals("app-0");
        final List<String> args = new ArrayList<>(
                launcher
                        ? List.of("--driver-memory", "700m")
                        : List.of(
                                "--jars",
                                libraryJar.toString(),
                                "--conf",
                                "spark.plugins=org.switchml.spark.SwitchMLPlugin"));
        args.addAll(List.of(
                "--master",
                "local[2]",
                "--name",
                name,
                "--conf",
                "spark.driver.host=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.switchml.jobService.address=" + service,
                "--conf",
                "spark.switchml.auth.tokenFile=" + token,
                "--conf",
                "spark.switchml.fallback=" + fallback,
                // One executor per application: without this its sums would be taken in memory, not on the switch.
                "--conf",
                "spark.switchml.localShortcut=false",
                "--class",
                main.getName(),
                appJar.toString()));
        args.addAll(List.of(appArgs));
        if (launcher) {
            return Jvm.launch(name, work.resolve(name + ".log"), env, List.of(), "switchml-submit", args);
        }
        final List<String> jvm = new ArrayList<>(jvmFlags);
        jvm.addAll(List.of("-Xmx700m", "-cp", sparkHome.resolve("jars") + "/*"));
        return Jvm.start(name, work.resolve(name + ".log"), env, jvm, "org.apache.spark.deploy.SparkSubmit", args);
    }
}

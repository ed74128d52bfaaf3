package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.testing.Repo;

/**
 * What {@code bin/switchml-submit} hands spark-submit (its dry run): our jar joins the user's {@code --jars},
 * our plugin joins the user's {@code spark.plugins}, and nothing after the application jar is touched; a
 * {@code SPARK_HOME} of another Spark than 4.0.x is refused.
 */
@Timeout(60)
class SubmitScriptTest {
    private static final String PLUGIN = SwitchMLPlugin.class.getName();

    @Test
    void theUsersPluginsAndJarsAreMergedAndTheApplicationsArgumentsLeftAlone() throws Exception {
        final List<String> out = dryRun(
                "--master",
                "local[2]",
                "--conf",
                "spark.plugins=com.acme.Audit",
                "--jars",
                "/opt/extra.jar",
                "--verbose",
                "--conf",
                "spark.executor.memory=2g",
                "--class",
                "my.App",
                "app.jar",
                "--jars",
                "/data/not-ours.jar",
                "--conf",
                "spark.plugins=app.Arg",
                "--verbose");
        final String ours = Repo.root().resolve("spark-switchml/target").toString();
        assertEquals("--jars", out.get(0));
        assertTrue(out.get(1).startsWith(ours) && out.get(1).endsWith(",/opt/extra.jar"), out.get(1));
        assertEquals(List.of("--conf", "spark.plugins=" + PLUGIN + ",com.acme.Audit"), out.subList(2, 4));
        assertEquals(
                List.of(
                        "--master",
                        "local[2]",
                        "--verbose",
                        "--conf",
                        "spark.executor.memory=2g",
                        "--class",
                        "my.App",
                        "app.jar",
                        "--jars",
                        "/data/not-ours.jar",
                        "--conf",
                        "spark.plugins=app.Arg",
                        "--verbose"),
                out.subList(4, out.size()),
                "spark-submit's options in order, then the application's arguments as given");
    }

    @Test
    void ourPluginIsNotListedTwiceAndEqualsFormsCount() throws Exception {
        final List<String> out = dryRun(
                "--conf=spark.plugins=" + PLUGIN + ", com.acme.Audit",
                "--jars=/a.jar,/b.jar",
                "--master=local",
                "app.jar");
        assertEquals("spark.plugins=" + PLUGIN + ",com.acme.Audit", out.get(3));
        assertTrue(out.get(1).endsWith(",/a.jar,/b.jar"), out.get(1));
        assertEquals(List.of("--master=local", "app.jar"), out.subList(4, out.size()));
    }

    /** A SPARK_HOME of another Spark than 4.0.x is refused in one line, exit 2; 4.0.x of any patch passes. */
    @Test
    void aSparkHomeOfAnotherVersionIsRefusedInOneLine(@TempDir final Path home) throws Exception {
        Files.createDirectories(home.resolve("jars"));
        final Path submit = Files.createDirectories(home.resolve("bin")).resolve("spark-submit");
        Files.writeString(submit, "#!/bin/sh\nexit 0\n");
        assertTrue(submit.toFile().setExecutable(true));
        final Map<String, String> env = Map.of("SPARK_HOME", home.toString());

        final Run none = run(env, "--class", "my.App", "app.jar");
        assertEquals(2, none.code(), none.text());
        assertEquals(
                List.of(
                        "switchml-submit: SPARK_HOME=" + home + " is no Spark distribution (no jars/spark-core_*.jar); "
                                + "spark-switchml needs Spark 4.0.x: point SPARK_HOME at one, or unset it to run this build's Spark 4.0.1"),
                none.text().lines().toList());

        final Path core = Files.createFile(home.resolve("jars/spark-core_2.13-3.5.1.jar"));
        final Run old = run(env, "--class", "my.App", "app.jar");
        assertEquals(2, old.code(), old.text());
        assertEquals(1, old.text().lines().count(), old.text());
        assertTrue(
                old.text()
                        .startsWith("switchml-submit: SPARK_HOME=" + home + " is Spark 3.5.1; spark-switchml needs "
                                + "Spark 4.0.x"),
                old.text());

        Files.move(core, home.resolve("jars/spark-core_2.13-4.0.2.jar"));
        final Run good = run(env, "--class", "my.App", "app.jar");
        assertEquals(0, good.code(), good.text());
        assertEquals("--jars", good.text().lines().findFirst().orElse(""), good.text());
    }

    private record Run(int code, String text) {}

    private static List<String> dryRun(final String... args) throws IOException, InterruptedException {
        final Run r = run(Map.of(), args);
        assertEquals(0, r.code(), r.text());
        return r.text().lines().toList();
    }

    /** The script's dry run with {@code env} added; its exit code and its output (stdout and stderr). */
    private static Run run(final Map<String, String> env, final String... args)
            throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>(
                List.of("bash", Repo.root().resolve("bin/switchml-submit").toString()));
        cmd.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("SPARK_HOME");
        pb.environment().put("SWITCHML_SUBMIT_DRY_RUN", "1");
        pb.environment().putAll(env);
        final Process p = pb.start();
        final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bin/switchml-submit did not finish");
        return new Run(p.exitValue(), text);
    }
}

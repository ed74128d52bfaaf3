package org.switchml.spark;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.testing.Repo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@code bin/switchml-submit} hands spark-submit (its dry run): our jar joins the user's {@code --jars},
 * our plugin joins the user's {@code spark.plugins}, and nothing after the application jar is touched.
 */
@Timeout(60)
class SubmitScriptTest {
    private static final String PLUGIN = SwitchMLPlugin.class.getName();

    @Test
    void theUsersPluginsAndJarsAreMergedAndTheApplicationsArgumentsLeftAlone() throws Exception {
        final List<String> out = dryRun("--master", "local[2]", "--conf", "spark.plugins=com.acme.Audit",
                "--jars", "/opt/extra.jar", "--verbose", "--conf", "spark.executor.memory=2g", "--class", "my.App",
                "app.jar", "--jars", "/data/not-ours.jar", "--conf", "spark.plugins=app.Arg", "--verbose");
        final String ours = Repo.root().resolve("spark-switchml/target").toString();
        assertEquals("--jars", out.get(0));
        assertTrue(out.get(1).startsWith(ours) && out.get(1).endsWith(",/opt/extra.jar"), out.get(1));
        assertEquals(List.of("--conf", "spark.plugins=" + PLUGIN + ",com.acme.Audit"), out.subList(2, 4));
        assertEquals(List.of("--master", "local[2]", "--verbose", "--conf", "spark.executor.memory=2g", "--class",
                "my.App", "app.jar", "--jars", "/data/not-ours.jar", "--conf", "spark.plugins=app.Arg", "--verbose"),
                out.subList(4, out.size()), "spark-submit's options in order, then the application's arguments as given");
    }

    @Test
    void ourPluginIsNotListedTwiceAndEqualsFormsCount() throws Exception {
        final List<String> out = dryRun("--conf=spark.plugins=" + PLUGIN + ", com.acme.Audit", "--jars=/a.jar,/b.jar",
                "--master=local", "app.jar");
        assertEquals("spark.plugins=" + PLUGIN + ",com.acme.Audit", out.get(3));
        assertTrue(out.get(1).endsWith(",/a.jar,/b.jar"), out.get(1));
        assertEquals(List.of("--master=local", "app.jar"), out.subList(4, out.size()));
    }

    private static List<String> dryRun(final String... args) throws IOException, InterruptedException {
        final List<String> cmd = new ArrayList<>(List.of("bash", Repo.root().resolve("bin/switchml-submit").toString()));
        cmd.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("SWITCHML_SUBMIT_DRY_RUN", "1");
        final Process p = pb.start();
        final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bin/switchml-submit did not finish");
        assertEquals(0, p.exitValue(), text);
        return text.lines().toList();
    }
}

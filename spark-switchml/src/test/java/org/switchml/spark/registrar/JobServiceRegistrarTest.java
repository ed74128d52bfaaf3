package org.switchml.spark.registrar;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.service.JobDesk;
import org.switchml.service.standalone.SwitchMain;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * The name a driver gives its session: Spark's name and id, cut to what the service takes and without control
 * characters, so an application with a long or odd name still gets its session.
 */
@Timeout(60)
class JobServiceRegistrarTest {
    @TempDir
    Path dir;

    @Test
    void theApplicationNameIsCutToTheServicesBoundKeepingTheIdAndLosingControlCharacters() {
        final String id = "app-20261206042000-0007";
        final String longName = "x".repeat(300);
        final String cut = JobServiceRegistrar.application(Map.of("spark.app.name", longName, "spark.app.id", id));
        assertEquals(JobDesk.MAX_NAME_LENGTH, cut.length());
        assertTrue(cut.endsWith("... (" + id + ")"), cut);
        assertEquals(
                "two lines (" + id + ")",
                JobServiceRegistrar.application(Map.of("spark.app.name", "two\nlines", "spark.app.id", id)));
        assertEquals("two lines", JobServiceRegistrar.application(Map.of("spark.app.name", "two\u0085lines")));
        assertEquals(
                "short (" + id + ")",
                JobServiceRegistrar.application(Map.of("spark.app.name", "short", "spark.app.id", id)));
        assertEquals(
                JobDesk.MAX_NAME_LENGTH,
                JobServiceRegistrar.application(Map.of("spark.app.name", "n", "spark.app.id", "i".repeat(400)))
                        .length());
    }

    @Test
    void aDriverWithALongOddNameStillOpensItsSession() {
        try (SwitchMain.Running sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "1",
                "--service-port",
                "0",
                "--token-file",
                dir.resolve("token").toString())) {
            final Map<String, String> settings = Map.of(
                    SwitchMLConfig.JOB_SERVICE_ADDRESS.key(),
                    sw.serviceAddress(),
                    SwitchMLConfig.AUTH_TOKEN_FILE.key(),
                    sw.tokenFile().toString(),
                    "spark.app.name",
                    "a\tname\nover\rseveral lines " + "y".repeat(500),
                    "spark.app.id",
                    "app-1");
            try (JobServiceRegistrar r = new JobServiceRegistrar(null, settings)) {
                assertTrue(r.reachable());
                assertEquals(1, sw.jobs().desk().occupancy().sessions());
            }
            assertEquals(0, sw.jobs().desk().occupancy().sessions());
        }
    }
}

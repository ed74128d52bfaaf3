package org.switchml;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The build fills in the version (the pom's, which surefire also passes as {@code switchml.version}); the jar's
 * main says what the jar is, and refuses what it does not know in one line. ShadedJarIT runs it as
 * {@code java -jar} on the built jar.
 */
@Timeout(30)
class VersionTest {
    @Test
    void theVersionIsThePoms() {
        assertEquals(System.getProperty("switchml.version"), Version.current());
        assertTrue(Version.spark().startsWith("4.0."), Version.spark());
    }

    @Test
    void mainSaysWhatTheJarIsAndRefusesUnknownArguments() {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(0, Version.run(new String[0], print(out), print(err)));
        final String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("spark-switchml " + Version.current() + ": SwitchML in-network aggregation for "
                + "Apache Spark " + Version.spark()), text);
        assertTrue(text.contains("--conf spark.plugins=org.switchml.spark.SwitchMLPlugin"), text);
        assertEquals("", err.toString(StandardCharsets.UTF_8));

        out.reset();
        assertEquals(0, Version.run(new String[] {"--version"}, print(out), print(err)));
        assertEquals(List.of(Version.current()), out.toString(StandardCharsets.UTF_8).lines().toList());

        out.reset();
        assertEquals(Version.EXIT_USAGE, Version.run(new String[] {"--bogus"}, print(out), print(err)));
        assertEquals(List.of("spark-switchml: unknown argument '--bogus': the jar takes only --help or --version"),
                err.toString(StandardCharsets.UTF_8).lines().toList());
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    private static PrintStream print(final ByteArrayOutputStream buf) {
        return new PrintStream(buf, true, StandardCharsets.UTF_8);
    }
}

package org.switchml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.testing.Repo;

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
        assertTrue(
                text.startsWith("spark-switchml " + Version.current() + ": SwitchML in-network aggregation for "
                        + "Apache Spark " + Version.spark()),
                text);
        assertTrue(text.contains("--conf spark.plugins=org.switchml.spark.SwitchMLPlugin"), text);
        assertEquals("", err.toString(StandardCharsets.UTF_8));

        out.reset();
        assertEquals(0, Version.run(new String[] {"--version"}, print(out), print(err)));
        assertEquals(
                List.of(Version.current()),
                out.toString(StandardCharsets.UTF_8).lines().toList());

        out.reset();
        assertEquals(Version.EXIT_USAGE, Version.run(new String[] {"--bogus"}, print(out), print(err)));
        assertEquals(
                List.of("spark-switchml: unknown argument '--bogus': the jar takes only --help or --version"),
                err.toString(StandardCharsets.UTF_8).lines().toList());
        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }

    /**
     * The version is written in the root pom and nowhere else a user or a script reads it: not in the other poms,
     * the scripts, the docs or the notes (the changelog, a history, names versions on purpose).
     */
    @Test
    void theVersionIsWrittenOnlyInTheRootPom() throws IOException {
        final String version = Version.current();
        final Path root = Repo.root();
        assertTrue(
                Files.readString(root.resolve("pom.xml")).contains("<revision>" + version + "</revision>"),
                "the root pom's revision is not " + version);
        final List<String> found = new ArrayList<>();
        final List<Path> places = new ArrayList<>(List.of(
                root.resolve("README.md"),
                root.resolve("bin"),
                root.resolve("examples/bin"),
                root.resolve("examples/testbed"),
                root.resolve("notebooks"),
                root.resolve("spark-switchml/pom.xml"),
                root.resolve("examples/pom.xml"),
                root.resolve("integration-tests/pom.xml"),
                root.resolve("spark-dist/pom.xml")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            places.addAll(docs.filter(p -> p.toString().endsWith(".md")).toList());
        }
        int files = 0;
        for (final Path place : places) {
            try (Stream<Path> walk = Files.walk(place)) {
                for (final Path f : walk.filter(Files::isRegularFile).toList()) {
                    files++;
                    if (new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1).contains(version)) {
                        found.add(root.relativize(f).toString());
                    }
                }
            }
        }
        assertTrue(files > 20, "scanned only " + files + " files");
        assertTrue(found.isEmpty(), "the version " + version + " is written in " + found);
    }

    private static PrintStream print(final ByteArrayOutputStream buf) {
        return new PrintStream(buf, true, StandardCharsets.UTF_8);
    }
}

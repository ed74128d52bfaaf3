package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.switchml.spark.config.ConfigEntry;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.driver.StageLauncher;
import org.switchml.testing.Repo;

/**
 * docs/configuration.md is generated from {@link SwitchMLConfig}; this test fails when the committed
 * file is stale. Regenerate with {@code -Dswitchml.docs.write=true}.
 */
class ConfigurationDocTest {
    private static final Path DOC = Path.of("..", "docs", "configuration.md");

    /** Writes docs/configuration.md from the registry. */
    public static void main(final String[] args) throws IOException {
        Files.writeString(args.length > 0 ? Path.of(args[0]) : DOC, SwitchMLConfig.markdown(), StandardCharsets.UTF_8);
    }

    @Test
    void theCommittedDocumentIsGeneratedFromTheRegistry() throws IOException {
        if (Boolean.getBoolean("switchml.docs.write")) {
            main(new String[0]);
        }
        assertTrue(Files.exists(DOC), DOC.toAbsolutePath() + " is missing; run with -Dswitchml.docs.write=true");
        assertEquals(
                SwitchMLConfig.markdown(),
                Files.readString(DOC, StandardCharsets.UTF_8),
                "docs/configuration.md is stale: regenerate with mvn -pl spark-switchml test "
                        + "-Dtest=ConfigurationDocTest -Dswitchml.docs.write=true");
    }

    @Test
    void everyKeyIsDocumentedOnceAndDefaultsParse() {
        final long distinct =
                SwitchMLConfig.ENTRIES.stream().map(ConfigEntry::key).distinct().count();
        assertEquals(SwitchMLConfig.ENTRIES.size(), distinct);
        for (final ConfigEntry<?> e : SwitchMLConfig.ENTRIES) {
            assertTrue(e.key().startsWith("spark.switchml."), e.key());
            assertTrue(SwitchMLConfig.markdown().contains("`" + e.key() + "`"), e.key());
            e.parse(e.defaultText());
        }
    }

    @Test
    void badValuesAndUnknownKeysAreRejectedWithTheKey() {
        final IllegalArgumentException k =
                assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.K.parse("100000"));
        assertTrue(k.getMessage().contains("spark.switchml.k") && k.getMessage().contains("100000"), k.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.FALLBACK.parse("maybe"));
        assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.SWITCH_ADDRESS.parse("nohost"));
        assertEquals(SwitchMLConfig.Fallback.FAIL, SwitchMLConfig.FALLBACK.parse("fail"));
        assertEquals(1500L, SwitchMLConfig.RESULT_TIMEOUT.parse("1500ms"));
        assertEquals(2000L, SwitchMLConfig.RESULT_TIMEOUT.parse("2s"));
        final Map<String, String> unknown = Map.of("spark.switchml.typo", "1");
        final IllegalArgumentException u = assertThrows(
                IllegalArgumentException.class,
                () -> SwitchMLConfig.validate(SwitchMLConfig.of(unknown), unknown.keySet()));
        assertTrue(u.getMessage().contains("spark.switchml.typo"), u.getMessage());
    }

    /**
     * Every {@code spark.switchml.*} name that the code, the docs, the notes or the scripts give a user is a
     * setting of the registry (or the task property a barrier task reads), so no message or page names a key
     * that does not exist.
     */
    @Test
    void everyKeyTheSourcesAndDocsNameIsASetting() throws IOException {
        final Set<String> known = new TreeSet<>();
        SwitchMLConfig.ENTRIES.forEach(e -> known.add(e.key()));
        known.add(StageLauncher.ATTEMPT_PROPERTY);
        final Pattern key = Pattern.compile("spark\\.switchml\\.[A-Za-z0-9_.]*[A-Za-z0-9]");
        final Path root = Repo.root();
        final Set<String> named = new TreeSet<>();
        final List<String> unknown = new ArrayList<>();
        for (final String dir : new String[] {
            "spark-switchml/src/main",
            "examples/src/main",
            "integration-tests/src",
            "docs",
            "notebooks",
            "bin",
            "examples/bin",
            "examples/testbed",
            "README.md"
        }) {
            try (Stream<Path> files = Files.walk(root.resolve(dir))) {
                for (final Path f : files.filter(Files::isRegularFile).toList()) {
                    // Latin-1 reads any bytes (PNGs among the docs); a key is ASCII either way.
                    final Matcher m = key.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
                    while (m.find()) {
                        named.add(m.group());
                        if (!known.contains(m.group())) {
                            unknown.add(root.relativize(f) + ": " + m.group());
                        }
                    }
                }
            }
        }
        assertTrue(named.size() >= 15, "the scan found only " + named);
        assertTrue(unknown.isEmpty(), "names that are no setting: " + unknown);
    }

    @Test
    void durationsAreWrittenAsSparkWritesThem() {
        assertEquals(120_000L, SwitchMLConfig.RESULT_TIMEOUT.parse("2min"));
        assertEquals(120_000L, SwitchMLConfig.RESULT_TIMEOUT.parse("2m"));
        assertEquals(3_600_000L, SwitchMLConfig.START_TIMEOUT.parse("1h"));
        assertEquals(86_400_000L, SwitchMLConfig.START_TIMEOUT.parse("1d"));
        assertEquals(250L, SwitchMLConfig.KILL_POLL_INTERVAL.parse("250"), "a bare number is milliseconds");
        assertEquals(3L, SwitchMLConfig.RETRANSMIT_TIMEOUT.parse("3500us"));
        assertEquals(0L, SwitchMLConfig.SLOT_WAIT.parse("500us"), "less than a millisecond is 0");
        // Below the bound once in milliseconds, and what Spark's parser refuses: one line naming key, value and rule.
        for (final String bad : new String[] {"500us", "1.5s", "10 s", "ten seconds", "-1s"}) {
            final IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.RESULT_TIMEOUT.parse(bad), bad);
            assertTrue(
                    e.getMessage()
                            .startsWith("spark.switchml.resultTimeout='" + bad + "' is invalid: must be a "
                                    + "duration >= 1ms"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
    }
}

package org.switchml.spark;

import org.switchml.spark.config.ConfigEntry;
import org.switchml.spark.config.SwitchMLConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        assertEquals(SwitchMLConfig.markdown(), Files.readString(DOC, StandardCharsets.UTF_8),
                "docs/configuration.md is stale: regenerate with mvn -pl spark-switchml test "
                        + "-Dtest=ConfigurationDocTest -Dswitchml.docs.write=true");
    }

    @Test
    void everyKeyIsDocumentedOnceAndDefaultsParse() {
        final long distinct = SwitchMLConfig.ENTRIES.stream().map(ConfigEntry::key).distinct().count();
        assertEquals(SwitchMLConfig.ENTRIES.size(), distinct);
        for (final ConfigEntry<?> e : SwitchMLConfig.ENTRIES) {
            assertTrue(e.key().startsWith("spark.switchml."), e.key());
            assertTrue(SwitchMLConfig.markdown().contains("`" + e.key() + "`"), e.key());
            e.parse(e.defaultText());
        }
    }

    @Test
    void badValuesAndUnknownKeysAreRejectedWithTheKey() {
        final IllegalArgumentException k = assertThrows(IllegalArgumentException.class,
                () -> SwitchMLConfig.K.parse("100000"));
        assertTrue(k.getMessage().contains("spark.switchml.k") && k.getMessage().contains("100000"), k.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.FALLBACK.parse("maybe"));
        assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.SWITCH_ADDRESS.parse("nohost"));
        assertEquals(SwitchMLConfig.Fallback.FAIL, SwitchMLConfig.FALLBACK.parse("fail"));
        assertEquals(1500L, SwitchMLConfig.RESULT_TIMEOUT.parse("1500ms"));
        assertEquals(2000L, SwitchMLConfig.RESULT_TIMEOUT.parse("2s"));
        final Map<String, String> unknown = Map.of("spark.switchml.typo", "1");
        final IllegalArgumentException u = assertThrows(IllegalArgumentException.class,
                () -> SwitchMLConfig.validate(SwitchMLConfig.of(unknown), unknown.keySet()));
        assertTrue(u.getMessage().contains("spark.switchml.typo"), u.getMessage());
    }
}

package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The Spark benchmark's command line: parsed before Spark starts, usage errors are one line and exit 2. */
class SparkAggregateBenchTest {
    @Test
    void flagsParse() throws Exception {
        final SparkAggregateBench.Options o = SparkAggregateBench.parse(new String[] {
            "--sizes",
            "2^20,1000",
            "--partitions=8",
            "--reps",
            "5",
            "--precision",
            "fp32",
            "--loop-dim",
            "64K",
            "--no-loop",
            "--profile"
        });
        assertArrayEquals(new int[] {1 << 20, 1000}, o.sizes());
        assertArrayEquals(new int[] {8}, o.partitions());
        assertEquals(5, o.reps());
        assertEquals("fp32", o.precision());
        assertEquals(64 << 10, o.loopDim());
        assertFalse(o.loop());
        assertTrue(o.profile());
        assertFalse(o.help());
        // The names the other examples use for the same ideas.
        final SparkAggregateBench.Options c = SparkAggregateBench.parse(
                new String[] {"--elements", "2^20,1000", "--repeat", "5", "--loop-elements", "64K"});
        assertArrayEquals(o.sizes(), c.sizes());
        assertEquals(5, c.reps());
        assertEquals(64 << 10, c.loopDim());
    }

    @Test
    void badFlagsExitWithCode2AndOneLineNamingTheValue() {
        // The arguments, then what the message must name.
        final String[][] cases = {
            {"--elements", "abc", "--elements", "'abc'"},
            {"--sizes", "0", "--elements", "0"},
            {"--elements", "2^40", "2^40"},
            {"--partitions", "1,,2", "--partitions", "''"},
            {"--reps", "-1", "--reps", "-1"},
            {"--precision", "fp16", "--precision", "'fp16'"},
            {"--loop-elements", "many", "--loop-elements", "'many'"},
            {"--bogus", "'--bogus'"},
            {"--reps", "--reps"},
            {"--no-loop=yes", "--no-loop", "'yes'"}
        };
        for (final String[] c : cases) {
            final int given = c[0].contains("=") || c[0].equals("--bogus") || c.length == 2 ? 1 : 2;
            final String[] args = Arrays.copyOf(c, given);
            final String joined = String.join(" ", args);
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int code = SparkAggregateBench.run(
                    args,
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            final String text = err.toString(StandardCharsets.UTF_8);
            assertEquals(SparkAggregateBench.EXIT_USAGE, code, joined);
            assertFalse(text.contains("\tat ") || text.contains("Exception"), text);
            assertEquals("", out.toString(StandardCharsets.UTF_8), joined);
            final String[] lines = text.split("\n");
            assertEquals(2, lines.length, joined + ": " + text);
            assertTrue(lines[0].startsWith("SparkAggregateBench: "), text);
            for (int i = given; i < c.length; i++) {
                assertTrue(lines[0].contains(c[i]), joined + ": '" + lines[0] + "' should name " + c[i]);
            }
            assertEquals("Try --help.", lines[1]);
        }
    }

    @Test
    void helpPrintsUsageAndExitsWith0WithoutStartingSpark() {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int code = SparkAggregateBench.run(
                new String[] {"--sizes", "1000", "--help"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                System.err);
        assertEquals(0, code);
        final String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.startsWith("Usage: SparkAggregateBench"), text);
        for (final String flag :
                new String[] {"--elements", "--partitions", "--reps", "--precision", "--no-loop", "--verbose"}) {
            assertTrue(text.contains(flag), flag);
        }
    }
}

package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
    @Test
    void defaultsSweep() throws Exception {
        final BenchOptions o = BenchOptions.parse(new String[0]);
        assertEquals(List.of(2, 4, 8), o.workers);
        assertEquals(1 << 10, o.elements.get(0));
        assertEquals(1 << 24, o.elements.get(o.elements.size() - 1));
        assertEquals(List.of(0.0), o.losses);
        assertTrue(o.jitWarmup);
    }

    @Test
    void sizesAcceptPowersAndSuffixes() throws Exception {
        final BenchOptions o = BenchOptions.parse(new String[] {
            "--elements", "2^20,64K,3", "--workers=4", "--k", "256", "--fp64", "--values", "MIXED", "--threads", "1"
        });
        assertEquals(List.of(1 << 20, 64 << 10, 3), o.elements);
        assertEquals(List.of(4), o.workers);
        assertEquals(256, o.k);
        assertTrue(o.fp64);
        assertEquals(Values.MIXED, o.values);
        assertEquals(1, o.lanes);
    }

    @Test
    void severalLossRatesAndNoWarmup() throws Exception {
        final BenchOptions o = BenchOptions.parse(new String[] {"--loss", "0,0.01,0.1", "--no-warmup"});
        assertEquals(List.of(0.0, 0.01, 0.1), o.losses);
        assertFalse(o.jitWarmup);
    }

    /** One name per idea across the examples; the older names of documented commands still work. */
    @Test
    void canonicalNamesAndTheirAliases() throws Exception {
        final BenchOptions a = BenchOptions.parse(
                new String[] {"--precision", "fp64", "--reps", "3", "--warm-up", "2", "--no-jit-warm-up"});
        final BenchOptions b =
                BenchOptions.parse(new String[] {"--fp64", "--repeat", "3", "--warmup", "2", "--no-warmup"});
        for (final BenchOptions o : List.of(a, b)) {
            assertTrue(o.fp64);
            assertEquals(3, o.repeat);
            assertEquals(2, o.warmup);
            assertFalse(o.jitWarmup);
        }
        assertFalse(BenchOptions.parse(new String[] {"--precision", "fp32"}).fp64);
        assertFalse(BenchOptions.parse(new String[0]).fp64, "fp32 by default");
        assertTrue(usageError(new String[] {"--precision", "fp16"}).contains("--precision must be fp64 or fp32"));
        assertTrue(usageError(new String[] {"--precision", "fp64", "--k", "63"})
                .contains("--precision fp64 needs an even --k"));
    }

    @Test
    void badFlagsAreUsageErrors() {
        for (final String[] args : new String[][] {
            {"--workers", "0"},
            {"--workers", "257"},
            {"--k"},
            {"--k", "x"},
            {"--bogus"},
            {"--loss", "1"},
            {"--values", "pink"},
            {"--fp64", "--k", "63"},
            {"--verify=yes"},
            {"--mode", "fast"},
            {"--elements", "2^99"},
            {"--loss", "0,0"},
            {"--loss", "0,"},
            {"--no-warmup=1"},
            {"--k", "16000", "--pool", "65536"},
            {"--rto", "100", "--result-timeout", "50"}
        }) {
            assertThrows(BenchOptions.UsageException.class, () -> BenchOptions.parse(args), String.join(" ", args));
        }
    }

    /** A bad flag gives exit code 2 and one line naming the bad value (plus "Try --help."), never a stack trace. */
    @Test
    void badFlagsExitWithCode2AndOneLineNamingTheValue() {
        // The arguments, then what the message must name.
        final String[][] cases = {
            {"--workers", "many", "--workers", "'many'"},
            {"--loss", "0.01,1.5", "--loss", "1.5"},
            {"--k", "0", "--k", "0"},
            {"--pool", "-3", "--pool", "-3"},
            {"--seed", "x1", "--seed", "'x1'"},
            {"--elements", "", "--elements", "''"},
            {"--threads", "99", "--threads", "99"},
            {"--bogus", "--bogus"}
        };
        for (final String[] c : cases) {
            final String[] args = Arrays.copyOf(c, c.length == 2 ? 1 : 2);
            final String joined = String.join(" ", args);
            final String text = usageError(args);
            final String[] lines = text.split("\n");
            assertEquals(2, lines.length, joined + ": " + text);
            assertTrue(lines[0].startsWith("allreduce-bench: "), text);
            for (int i = args.length; i < c.length; i++) {
                assertTrue(lines[0].contains(c[i]), joined + ": '" + lines[0] + "' should name " + c[i]);
            }
            assertEquals("Try --help.", lines[1]);
        }
    }

    /** Runs the benchmark with bad {@code args}: exit code 2, nothing on stdout, no stack trace; returns stderr. */
    private static String usageError(final String[] args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = AllReduceBench.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        final String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(AllReduceBench.EXIT_USAGE, code, String.join(" ", args) + ": " + text);
        assertFalse(text.contains("\tat ") || text.contains("Exception"), text);
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        return text;
    }

    @Test
    void helpListsTheFlagsAndExitsWith0() {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int code = AllReduceBench.run(
                new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertEquals(0, code);
        final String text = out.toString(StandardCharsets.UTF_8);
        for (final String flag : new String[] {"--workers", "--elements", "--loss", "--no-warmup", "--verify"}) {
            assertTrue(text.contains(flag), flag);
        }
    }
}

package org.switchml.examples;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchOptionsTest {
    @Test
    void defaultsSweep() throws Exception {
        final BenchOptions o = BenchOptions.parse(new String[0]);
        assertEquals(List.of(2, 4, 8), o.workers);
        assertEquals(1 << 10, o.elements.get(0));
        assertEquals(1 << 24, o.elements.get(o.elements.size() - 1));
    }

    @Test
    void sizesAcceptPowersAndSuffixes() throws Exception {
        final BenchOptions o = BenchOptions.parse(new String[] {"--elements", "2^20,64K,3", "--workers=4",
            "--k", "256", "--fp64", "--values", "MIXED", "--threads", "1"});
        assertEquals(List.of(1 << 20, 64 << 10, 3), o.elements);
        assertEquals(List.of(4), o.workers);
        assertEquals(256, o.k);
        assertTrue(o.fp64);
        assertEquals(Values.MIXED, o.values);
        assertEquals(1, o.lanes);
    }

    @Test
    void badFlagsAreUsageErrors() {
        for (final String[] args : new String[][] {
            {"--workers", "0"}, {"--workers", "33"}, {"--k"}, {"--k", "x"}, {"--bogus"}, {"--loss", "1"},
            {"--values", "pink"}, {"--fp64", "--k", "63"}, {"--verify=yes"}, {"--mode", "fast"}, {"--elements", "2^99"}}) {
            assertThrows(BenchOptions.UsageException.class, () -> BenchOptions.parse(args), String.join(" ", args));
        }
    }

    @Test
    void badFlagsExitWithCode2AndAMessage() {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = AllReduceBench.run(new String[] {"--workers", "many"}, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(AllReduceBench.EXIT_USAGE, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--workers"));
    }
}

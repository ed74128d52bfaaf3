package org.switchml.examples;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The command line of {@link LogisticRegressionBench} (usage errors exit 2 in main; here: the parse). */
class LogisticRegressionBenchOptionsTest {
    @Test
    void defaultsAreTheTargetsCases() {
        final LogisticRegressionBench.Options o = LogisticRegressionBench.parse(new String[0]);
        assertEquals(List.of("comm", "overhead", "compute"), o.cases());
        assertEquals(1 << 20, o.features());
        assertEquals(10, o.classes());
        assertEquals(30, o.nnz());
        assertEquals(16, o.partitions());
        assertEquals("fp64", o.precision());
        assertEquals(1, o.repeat());
        assertEquals("auto", o.warmUp());
    }

    @Test
    void flagsParse() {
        final LogisticRegressionBench.Options o = LogisticRegressionBench.parse(new String[] {"--case", "overhead",
            "--rows", "2000", "--max-iter", "20", "--repeat", "3", "--precision", "fp32", "--no-stock", "--reg", "0.01", "--warm-up", "none"});
        assertEquals(List.of("overhead"), o.cases());
        assertEquals(2000, o.rows());
        assertEquals(20, o.maxIter());
        assertEquals(3, o.repeat());
        assertEquals("fp32", o.precision());
        assertFalse(o.stock());
        assertEquals(0.01, o.reg());
        assertEquals("none", o.warmUp());
    }

    @Test
    void helpAndUsageErrors() {
        assertNull(LogisticRegressionBench.parse(new String[] {"--help"}));
        for (final String[] args : new String[][] {{"--case", "fast"}, {"--rows"}, {"--rows", "x"}, {"--rows", "0"},
            {"--classes", "2"}, {"--reg", "-1"}, {"--precision", "fp16"}, {"--repeat", "0"}, {"--bogus"},
            {"--features", "10", "--nnz", "11"}, {"--warm-up", "huge"}}) {
            assertThrows(IllegalArgumentException.class, () -> LogisticRegressionBench.parse(args), String.join(" ", args));
        }
    }
}

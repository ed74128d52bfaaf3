package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line of {@link LogisticRegressionBench}: parsed before Spark starts, usage errors are one line and exit 2. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
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
        final LogisticRegressionBench.Options o = LogisticRegressionBench.parse(new String[] {
            "--case",
            "overhead",
            "--rows",
            "2000",
            "--max-iter",
            "20",
            "--reps",
            "3",
            "--precision",
            "fp32",
            "--no-stock",
            "--reg-param",
            "0.01",
            "--warm-up",
            "none"
        });
        assertEquals(List.of("overhead"), o.cases());
        assertEquals(2000, o.rows());
        assertEquals(20, o.maxIter());
        assertEquals(3, o.repeat());
        assertEquals("fp32", o.precision());
        assertFalse(o.stock());
        assertEquals(0.01, o.reg());
        assertEquals("none", o.warmUp());
        // The names of documented commands (--reg, --repeat) still work.
        final LogisticRegressionBench.Options old =
                LogisticRegressionBench.parse(new String[] {"--reg", "0.01", "--repeat", "3"});
        assertEquals(0.01, old.reg());
        assertEquals(3, old.repeat());
    }

    /** The overhead and compute cases need Fashion-MNIST: without it, one line and exit 2, before Spark starts. */
    @Test
    void missingFashionMnistIsOneLineBeforeSpark(@TempDir final Path dir) {
        for (final String c : new String[] {"overhead", "compute", "all"}) {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int code = LogisticRegressionBench.run(
                    new String[] {"--case", c, "--fashion-mnist", dir.toString()}, print(out), print(err));
            final String text = err.toString(StandardCharsets.UTF_8);
            assertEquals(Cli.EXIT_USAGE, code, text);
            assertEquals(
                    List.of("LogisticRegressionBench: --fashion-mnist " + dir + ": no Fashion-MNIST train files "
                            + "there, which the overhead and compute cases read (apt-get install dataset-fashion-mnist, or --case "
                            + "comm)"),
                    text.lines().toList());
            assertEquals("", out.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void helpExits0AndUsageErrorsExit2WithOneLine() {
        final ByteArrayOutputStream help = new ByteArrayOutputStream();
        assertEquals(
                0,
                LogisticRegressionBench.parse(
                        new String[] {"--help"}, new LogisticRegressionBench.Flags(), print(help), System.err));
        for (final String flag :
                new String[] {"--case", "--rows", "--max-iter", "--precision", "--no-stock", "--warm-up"}) {
            assertTrue(help.toString(StandardCharsets.UTF_8).contains(flag), flag);
        }
        for (final String[] args : new String[][] {
            {"--case", "fast"},
            {"--rows"},
            {"--rows", "x"},
            {"--rows", "0"},
            {"--classes", "2"},
            {"--reg-param", "-1"},
            {"--precision", "fp16"},
            {"--reps", "0"},
            {"--bogus"},
            {"--features", "10", "--nnz", "11"},
            {"--warm-up", "huge"},
            {"--no-stock=maybe"}
        }) {
            assertThrows(
                    CommandLine.ParameterException.class,
                    () -> LogisticRegressionBench.parse(args),
                    String.join(" ", args));
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int code =
                    LogisticRegressionBench.parse(args, new LogisticRegressionBench.Flags(), print(out), print(err));
            final String text = err.toString(StandardCharsets.UTF_8);
            assertEquals(Cli.EXIT_USAGE, code, String.join(" ", args) + ": " + text);
            assertEquals("", out.toString(StandardCharsets.UTF_8));
            final String[] lines = text.split("\n");
            assertEquals(2, lines.length, text);
            assertTrue(lines[0].startsWith("LogisticRegressionBench: "), text);
            assertTrue(lines[0].contains(args[0].replaceFirst("=.*", "")), lines[0]);
            assertEquals("Try --help.", lines[1]);
        }
    }

    private static PrintStream print(final ByteArrayOutputStream buf) {
        return new PrintStream(buf, true, StandardCharsets.UTF_8);
    }
}

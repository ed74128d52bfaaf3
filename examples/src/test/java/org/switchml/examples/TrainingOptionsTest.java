package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The options the training programs share ({@link FitOptions}, {@link DataOptions}), declared once: each program's
 * own defaults, in its --help and in effect when the flag is not given; a value given wins; a bad one is the usual
 * one line in the program's name and exit 2. No Spark: all of it happens before a program starts a session.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class TrainingOptionsTest {
    /** A program's {@code run} without a session: none of these command lines gets that far. */
    private interface Program {
        int run(String[] args, PrintStream out, PrintStream err);
    }

    /** A program, how to make it, and the defaults it chooses for the shared options. */
    private record Case(
            String name,
            Program program,
            FitOptions fit,
            DataOptions data,
            String maxIter,
            String regParam,
            String features) {}

    private static List<Case> cases() {
        final TrainLinearModels linear = new TrainLinearModels();
        final TrainLogisticRegression logistic = new TrainLogisticRegression();
        return List.of(
                new Case(
                        "TrainLinearModels",
                        (a, o, e) -> TrainLinearModels.run(a, null, o, e),
                        linear.fit,
                        linear.data,
                        "100",
                        "0.01",
                        "100"),
                new Case(
                        "TrainLogisticRegression",
                        (a, o, e) -> TrainLogisticRegression.run(a, null, o, e),
                        logistic.fit,
                        logistic.data,
                        "100",
                        "0",
                        "1000"),
                new Case(
                        "TrainPipeline",
                        (a, o, e) -> TrainPipeline.run(a, null, o, e),
                        new TrainPipeline().fit,
                        null,
                        "50",
                        "0.01",
                        null),
                new Case("ConnectFit", ConnectFit::run, new ConnectFit().fit, null, "30", "0.01", null));
    }

    @Test
    void eachProgramsDefaultsAreInItsHelp() {
        for (final Case c : cases()) {
            final Result r = run(c.program(), "--help");
            assertEquals(0, r.code(), c.name() + ": " + r.err());
            assertTrue(
                    r.out().contains("--max-iter=N") && r.out().contains("maxIter (default " + c.maxIter() + ")"),
                    c.name() + ": " + r.out());
            assertTrue(
                    r.out().contains("--reg-param=R") && r.out().contains("regParam (default " + c.regParam() + ")"),
                    c.name() + ": " + r.out());
            assertEquals(
                    c.features() != null,
                    r.out().contains("generated: features (default " + c.features() + ")"),
                    c.name() + ": " + r.out());
            assertEquals(
                    c.data() != null,
                    r.out().contains("partitions of the cached input (default 4)"),
                    c.name() + ": " + r.out());
            // What an option shows when no one chose its default.
            assertFalse(r.out().contains("default null"), c.name() + ": " + r.out());
        }
    }

    @Test
    void eachProgramsDefaultsAreInEffectAndGivenValuesWin() {
        for (final Case c : cases()) {
            assertEquals(Integer.parseInt(c.maxIter()), c.fit().maxIter, c.name());
            assertEquals(Double.parseDouble(c.regParam()), c.fit().regParam, c.name());
            if (c.data() != null) {
                assertEquals(Integer.parseInt(c.features()), c.data().features, c.name());
                assertEquals(4, c.data().partitions, c.name());
            }
        }
        // Parsed: the defaults as picocli applies them, then given values.
        final TrainLogisticRegression parsed = new TrainLogisticRegression();
        assertEquals(Cli.PROCEED, Cli.parse("TrainLogisticRegression", parsed, new String[0], System.out, System.err));
        assertEquals(100, parsed.fit.maxIter);
        assertEquals(0.0, parsed.fit.regParam);
        assertEquals(1000, parsed.data.features);
        final TrainLogisticRegression given = new TrainLogisticRegression();
        assertEquals(
                Cli.PROCEED,
                Cli.parse(
                        "TrainLogisticRegression",
                        given,
                        new String[] {"--max-iter", "7", "--reg-param", "0.5", "--features", "12", "--partitions", "3"},
                        System.out,
                        System.err));
        assertEquals(7, given.fit.maxIter);
        assertEquals(0.5, given.fit.regParam);
        assertEquals(12, given.data.features);
        assertEquals(3, given.data.partitions);
        final TrainPipeline pipeline = new TrainPipeline();
        assertEquals(
                Cli.PROCEED,
                Cli.parse("TrainPipeline", pipeline, new String[] {"--reg-param", "0"}, System.out, System.err));
        assertEquals(50, pipeline.fit.maxIter);
        assertEquals(0.0, pipeline.fit.regParam);
    }

    @Test
    void aBadValueIsOneLineInTheProgramsNameAndExit2() {
        for (final Case c : cases()) {
            final String[][] bad = c.data() == null
                    ? new String[][] {
                        {"--max-iter", "-1", "--max-iter must be >= 0, got -1"},
                        {"--reg-param", "-0.5", "--reg-param must be >= 0, got -0.5"}
                    }
                    : new String[][] {
                        {"--max-iter", "-1", "--max-iter must be >= 0, got -1"},
                        {"--reg-param", "-0.5", "--reg-param must be >= 0, got -0.5"},
                        {"--features", "0", "--features must be >= 1, got 0"},
                        {"--partitions", "0", "--partitions must be >= 1, got 0"}
                    };
            for (final String[] b : bad) {
                final Result r = run(c.program(), b[0], b[1]);
                assertEquals(Cli.EXIT_USAGE, r.code(), c.name() + " " + b[0] + ": " + r.err());
                assertEquals(
                        List.of(c.name() + ": " + b[2], "Try --help."),
                        r.err().lines().toList());
                assertEquals("", r.out());
            }
        }
    }

    private record Result(int code, String out, String err) {}

    private static Result run(final Program program, final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = program.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}

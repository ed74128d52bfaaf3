package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.switchml.testing.Seeds;

/**
 * TrainLinearModels in one local Spark session: each new estimator against its stock twin with --compare, on
 * generated data and on LIBSVM's heart_scale: the same final objective to 1e-6, through the switch; and a usage
 * error.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class TrainLinearModelsTest {
    /** LIBSVM's own sample, as Debian's liblinear-tools ships it. */
    static final Path HEART_SCALE = Path.of("/usr/share/doc/liblinear-tools/examples/heart_scale");

    @RegisterExtension
    static final LocalSpark spark = new LocalSpark(false);

    private static final long SEED = Seeds.seed("TrainLinearModelsTest", 9);

    private static List<TrainLinearModels.Row2> compare(final String... args) {
        final TrainLinearModels t = new TrainLinearModels();
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        assertEquals(Cli.PROCEED, Cli.parse("TrainLinearModels", t, args, ps, ps));
        final List<TrainLinearModels.Row2> table = t.train(spark.session(), ps);
        System.out.println(out.toString(StandardCharsets.UTF_8));
        assertEquals(2, table.size());
        final TrainLinearModels.Row2 ours = table.get(0);
        final TrainLinearModels.Row2 stock = table.get(1);
        assertTrue(ours.switched().startsWith("yes"), ours.switched());
        assertEquals(stock.iterations(), ours.iterations());
        assertEquals(stock.objective(), ours.objective(), 1e-6 * Math.abs(stock.objective()));
        assertEquals(stock.metric(), ours.metric(), 1e-4 * Math.abs(stock.metric()));
        return table;
    }

    @Test
    void eachEstimatorAgainstItsStockTwinOnGeneratedData() {
        compare("--model", "svc", "--compare", "--rows", "3000", "--features", "20", "--seed", Long.toString(SEED));
        compare(
                "--model",
                "linear",
                "--compare",
                "--rows",
                "3000",
                "--features",
                "20",
                "--elastic-net-param",
                "0.5",
                "--seed",
                Long.toString(SEED));
    }

    @Test
    void eachEstimatorAgainstItsStockTwinOnHeartScale() {
        assumeTrue(
                Files.isReadable(HEART_SCALE),
                "NOT RUN: " + HEART_SCALE + " is missing (Debian package liblinear-tools)");
        compare("--model", "svc", "--compare", "--libsvm", HEART_SCALE.toString(), "--seed", Long.toString(SEED));
        compare("--model", "linear", "--compare", "--libsvm", HEART_SCALE.toString(), "--seed", Long.toString(SEED));
    }

    @Test
    void aBadModelIsAUsageError() {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = TrainLinearModels.run(
                new String[] {"--model", "tree"},
                spark.session(),
                System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(Cli.EXIT_USAGE, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("TrainLinearModels: --model must be svc or linear"));
    }
}

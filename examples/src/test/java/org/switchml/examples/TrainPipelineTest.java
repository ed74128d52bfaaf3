package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.testing.Seeds;

/**
 * TrainPipeline in one local Spark session: the shipped table through the one-hot and the hashing
 * pipelines, the saved PipelineModel loaded again by the test with MLlib's {@code PipelineModel.load}
 * (same predictions), a CSV given with --csv, and the usage errors.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class TrainPipelineTest {
    @RegisterExtension
    static final LocalSpark spark = new LocalSpark(false);

    private static final long SEED = Seeds.seed("TrainPipelineTest", 7);

    @Test
    void shippedTableOneHot(@TempDir final Path dir) throws IOException {
        final Run run = train("--seed", Long.toString(SEED), "--output", dir.toString());
        final TrainPipeline.Outcome o = run.outcome;
        assertEquals(5, o.fitted().stages().length);
        assertInstanceOf(LogisticRegressionModel.class, o.fitted().stages()[4]);
        assertEquals(0, o.differing());
        assertTrue(o.rows() > 50 && o.rows() < 160, "test rows " + o.rows());
        // The synthetic churn follows a logistic model: the fit must find it.
        assertTrue(o.auc() > 0.75, "AUC " + o.auc());
        assertEquals(o.auc(), o.loadedAuc(), 0.0);
        assertEquals(o.accuracy(), o.loadedAccuracy(), 0.0);
        assertTrue(run.stdout.contains("predictions: identical on " + o.rows() + " test rows"), run.stdout);
        assertTrue(
                run.stdout.contains("StringIndexer -> StringIndexer -> OneHotEncoder -> VectorAssembler -> "
                        + "SwitchMLLogisticRegression"),
                run.stdout);
        assertTable(run.stdout);
        // Loaded here again, independently of the program: same predictions as the fitted model.
        assertSamePredictions(
                o.fitted(), PipelineModel.load(dir.resolve("pipeline-model").toString()), o);
    }

    @Test
    void hashingWithACsvFile(@TempDir final Path dir) throws IOException {
        final Path csv = dir.resolve("churn.csv");
        try (InputStream in = TrainPipeline.class.getResourceAsStream(TrainPipeline.RESOURCE)) {
            Files.write(csv, in.readAllBytes());
        }
        final Run run = train(
                "--csv",
                csv.toString(),
                "--hashing",
                "--hash-features",
                "32",
                "--max-iter",
                "20",
                "--precision",
                "fp32",
                "--seed",
                Long.toString(SEED),
                "--output",
                dir.resolve("out").toString());
        final TrainPipeline.Outcome o = run.outcome;
        assertTrue(run.stdout.contains("input: " + csv), run.stdout);
        assertEquals(3, o.fitted().stages().length);
        assertEquals(32, ((LogisticRegressionModel) o.fitted().stages()[2]).numFeatures());
        assertEquals(0, o.differing());
        assertTrue(o.auc() > 0.65, "AUC " + o.auc());
        assertSamePredictions(o.fitted(), PipelineModel.load(o.saved().toString()), o);
    }

    /**
     * A CSV it cannot use is one line and exit 2: a missing one before Spark starts; a column missing names those
     * the file has; a field that is empty or not a number names the file and the record, and no task fails.
     */
    @Test
    void aCsvItCannotUseIsOneLine(@TempDir final Path dir) throws IOException {
        final Path none = dir.resolve("none.csv");
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(
                Cli.EXIT_USAGE,
                TrainPipeline.run(
                        new String[] {"--csv", none.toString()}, null, print(new ByteArrayOutputStream()), print(err)));
        assertEquals(
                List.of("TrainPipeline: --csv " + none + ": no such file or directory"),
                err.toString(StandardCharsets.UTF_8).lines().toList());
        assertFalse(spark.session().sparkContext().isStopped(), "the missing file reached Spark");

        final String header =
                "customer,tenure_months,monthly_charges,contract,internet,payment,support_calls,senior,churned";
        final String good = "C0001,3,68.69,month-to-month,fiber,bank,8,0,yes";
        final String[][] cases = {
            {
                "customer,tenure,churned\nC1,3,yes",
                "no columns tenure_months, monthly_charges, contract, internet, "
                        + "payment, support_calls, senior; its columns: customer, tenure, churned"
            },
            {
                header + "\n" + good + "\nC0002,seven,54.55,month-to-month,dsl,card,0,0,yes",
                "record 'C0002,seven,54.55,month-to-month,dsl,card,0,0,yes': tenure_months 'seven' is not a number"
            },
            {
                header + "\n" + good + "\nC0003,7,54.55,month-to-month,dsl,card,0,0,",
                "record 'C0003,7,54.55,month-to-month,dsl,card,0,0,': churned is empty"
            }
        };
        for (final String[] c : cases) {
            final Path csv = Files.writeString(dir.resolve("bad.csv"), c[0] + "\n");
            final String[] args = {
                "--csv", csv.toString(), "--output", dir.resolve("out").toString()
            };
            final ByteArrayOutputStream e = new ByteArrayOutputStream();
            final int failed = spark.failedTasks(() -> assertEquals(
                    Cli.EXIT_USAGE,
                    TrainPipeline.run(args, spark.session(), print(new ByteArrayOutputStream()), print(e))));
            assertEquals(
                    List.of("TrainPipeline: --csv " + csv + ": " + c[1]),
                    e.toString(StandardCharsets.UTF_8).lines().toList());
            assertEquals(0, failed, "tasks failed");
        }
    }

    @Test
    void usageErrorsExit2() {
        for (final String[] args : new String[][] {
            {"--max-iter", "-2"},
            {"--hash-features", "1"},
            {"--test-fraction", "0"},
            {"--precision", "bf16"},
            {"--reg-param", "x"},
            {"--nope"},
            {"--hashing=2"}
        }) {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertEquals(Cli.EXIT_USAGE, TrainPipeline.run(args, null, print(out), print(err)), String.join(" ", args));
            final String[] lines = err.toString(StandardCharsets.UTF_8).split("\n");
            assertEquals(2, lines.length);
            assertTrue(
                    lines[0].startsWith("TrainPipeline: ") && lines[0].contains(args[0].replaceFirst("=.*", "")),
                    lines[0]);
            assertEquals("", out.toString(StandardCharsets.UTF_8));
        }
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(0, TrainPipeline.run(new String[] {"--help"}, null, print(out), System.err));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("--hashing"));
    }

    private record Run(String stdout, TrainPipeline.Outcome outcome) {}

    private static Run train(final String... args) throws IOException {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final TrainPipeline t = new TrainPipeline();
        assertEquals(Cli.PROCEED, Cli.parse("TrainPipeline", t, args, print(buf), System.err));
        final TrainPipeline.Outcome o = t.train(spark.session(), print(buf));
        final String text = buf.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        return new Run(text, o);
    }

    private static PrintStream print(final ByteArrayOutputStream buf) {
        return new PrintStream(buf, true, StandardCharsets.UTF_8);
    }

    /** The printed table: its header and the two models' rows, each with an AUC and an accuracy in [0, 1]. */
    private static void assertTable(final String stdout) {
        final List<String> lines = stdout.lines().toList();
        final int h = lines.indexOf(
                lines.stream().filter(l -> l.startsWith("model ")).findFirst().orElseThrow());
        assertEquals(
                List.of("model", "test AUC", "test accuracy"),
                List.of(lines.get(h).trim().split("\\s{2,}")));
        for (int i = 1; i <= 2; i++) {
            final String[] f = lines.get(h + i).trim().split("\\s{2,}");
            assertEquals(3, f.length, lines.get(h + i));
            assertTrue(f[0].startsWith(i == 1 ? "fitted" : "loaded"), f[0]);
            for (int c = 1; c < 3; c++) {
                final double v = Double.parseDouble(f[c]);
                assertTrue(v > 0.5 && v <= 1, lines.get(h + i));
            }
        }
    }

    private static void assertSamePredictions(
            final PipelineModel a, final PipelineModel b, final TrainPipeline.Outcome o) {
        final List<Row> x = a.transform(o.test())
                .select("customer", "prediction", "probability")
                .orderBy("customer")
                .collectAsList();
        final List<Row> y = b.transform(o.test())
                .select("customer", "prediction", "probability")
                .orderBy("customer")
                .collectAsList();
        assertFalse(x.isEmpty());
        assertEquals(x, y);
    }
}

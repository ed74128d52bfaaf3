package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.imageio.ImageIO;
import org.apache.spark.SparkContext;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.examples.data.FashionMnist;
import org.switchml.testing.Seeds;

/**
 * TrainLogisticRegression end to end on small data in one local Spark session (sums through the embedded
 * switch): the table, the history CSV, the two charts, the saved models (loaded back with MLlib's own
 * {@code LogisticRegressionModel.load}), LIBSVM and Parquet input written by Spark, and the usage errors.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class TrainLogisticRegressionTest {
    @RegisterExtension
    static final LocalSpark spark = new LocalSpark(false);

    private static final long SEED = Seeds.seed("TrainLogisticRegressionTest", 17);

    @Test
    void generatedDataWithCompareWritesTableHistoryChartsAndModels(@TempDir final Path dir) throws IOException {
        final Path out = dir.resolve("out");
        final Run run = trainSmallGenerated("--compare", out);
        assertEquals(2, run.results.size());

        // The table: header with every column, one row per trainer; stock MLlib has no switch columns.
        final List<String[]> table = table(run.stdout);
        assertEquals(
                List.of(
                        "trainer",
                        "fit s",
                        "iterations",
                        "final loss",
                        "test accuracy",
                        "switch MB",
                        "retransmissions",
                        "fallbacks"),
                Arrays.asList(table.get(0)));
        assertEquals(3, table.size(), run.stdout);
        final String[] ours = table.get(1);
        final String[] stock = table.get(2);
        assertEquals(TrainLogisticRegression.SWITCHML, ours[0]);
        assertEquals(TrainLogisticRegression.MLLIB, stock[0]);
        assertTrue(Double.parseDouble(ours[5]) > 0, "MB through the switch: " + ours[5]);
        assertEquals("0", ours[7], "fallbacks");
        assertEquals(List.of("-", "-", "-"), Arrays.asList(stock).subList(5, 8));
        // The same trajectory: same iterations and final loss to the printed digits.
        assertEquals(ours[2], stock[2]);
        assertEquals(
                Double.parseDouble(stock[3]),
                Double.parseDouble(ours[3]),
                1e-9 * Math.abs(Double.parseDouble(stock[3])));
        final double accuracy = Double.parseDouble(ours[4]);
        assertTrue(accuracy > 1.0 / 3 + 0.1 && accuracy <= 1, "accuracy " + accuracy);
        assertTrue(run.stdout.contains("[switchml] iteration 1/8: loss"), run.stdout);
        assertTrue(run.stdout.contains("[mllib] iteration 1/8: loss"), run.stdout);

        // history.csv: every entry of each objective history, iterations 0..n in order, seconds increasing.
        final List<String> csv = Files.readAllLines(out.resolve("history.csv"));
        assertEquals("trainer,iteration,seconds,loss", csv.get(0));
        for (final TrainLogisticRegression.Trained r : run.results) {
            final double[] h = r.model().summary().objectiveHistory();
            final List<String[]> rows = csv.stream()
                    .skip(1)
                    .map(l -> l.split(",", -1))
                    .filter(f -> f[0].equals(r.trainer()))
                    .toList();
            assertEquals(h.length, rows.size(), r.trainer());
            double last = -1;
            for (int i = 0; i < rows.size(); i++) {
                assertEquals(4, rows.get(i).length);
                assertEquals(i, Integer.parseInt(rows.get(i)[1]));
                assertEquals(h[i], Double.parseDouble(rows.get(i)[3]), 0.0, r.trainer() + " loss " + i);
                final double s = Double.parseDouble(rows.get(i)[2]);
                assertTrue(s >= last && s <= r.seconds() + 1e-3, r.trainer() + " seconds " + s + " after " + last);
                last = s;
            }
        }

        for (final String png : new String[] {"loss-vs-time.png", "loss-vs-iteration.png"}) {
            assertChart(out.resolve(png));
        }
        for (final TrainLogisticRegression.Trained r : run.results) {
            assertEquals(out.resolve("models").resolve(r.trainer()), r.saved());
            final Dataset<Row> probe = LogisticRegressionBench.sparse(spark.session(), 300, 40, 3, 8, 2, SEED + 1);
            assertSamePredictions(
                    r.model(), LogisticRegressionModel.load(r.saved().toString()), probe);
            probe.unpersist();
        }
    }

    /** The usual binary LIBSVM convention, labels -1 and +1, as text the way LIBSVM's own tools write it. */
    @Test
    void readsPlusMinusOneLabelsAsZeroAndOne(@TempDir final Path dir) throws IOException {
        final SplittableRandom rnd = new SplittableRandom(SEED + 5);
        final StringBuilder text = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            final double a = rnd.nextDouble(-1, 1);
            final double b = rnd.nextDouble(-1, 1);
            text.append(a + 0.5 * b + 0.2 * rnd.nextGaussian() > 0 ? "+1" : "-1")
                    .append(" 1:")
                    .append(a)
                    .append(" 3:")
                    .append(b)
                    .append('\n');
        }
        final Path file = Files.writeString(dir.resolve("pm1.txt"), text.toString());
        final Run run = train(
                "--libsvm",
                file.toString(),
                "--max-iter",
                "5",
                "--seed",
                Long.toString(SEED),
                "--output",
                dir.resolve("out").toString());
        assertTrue(run.stdout.contains("labels: -1 and +1 read as 0 and 1"), run.stdout);
        final double auc = Double.parseDouble(table(run.stdout).get(1)[4]);
        assertTrue(auc > 0.8 && auc <= 1, "AUC " + auc);
    }

    @Test
    void readsLibsvmWrittenBySparkBinaryWithAuc(@TempDir final Path dir) throws IOException {
        final Dataset<Row> data = binary(600, 12, SEED + 2);
        final Path file = dir.resolve("data.libsvm");
        data.coalesce(1).write().format("libsvm").save(file.toString());
        final Path out = dir.resolve("out");
        final Run run = train(
                "--libsvm",
                file.toString(),
                "--max-iter",
                "6",
                "--reg-param",
                "0.01",
                "--seed",
                Long.toString(SEED),
                "--output",
                out.toString(),
                "--warm-up-iter",
                "2");
        assertTrue(run.stdout.contains("input: LIBSVM " + file), run.stdout);
        // The warm-up fit is reported on its own line, before the timed fit, and not in the table.
        final int warmUp = run.stdout.indexOf("[switchml] warm-up fit: 2 iterations in ");
        assertTrue(warmUp >= 0 && warmUp < run.stdout.indexOf("[switchml] fitting ..."), run.stdout);
        final List<String[]> table = table(run.stdout);
        assertEquals("test AUC", table.get(0)[4]);
        assertEquals(2, table.size());
        final double auc = Double.parseDouble(table.get(1)[4]);
        assertTrue(auc > 0.8 && auc <= 1, "AUC " + auc);
        final TrainLogisticRegression.Trained r = run.results.get(0);
        assertEquals(2, r.model().numClasses());
        assertEquals(12, r.model().numFeatures());
        assertSamePredictions(r.model(), LogisticRegressionModel.load(r.saved().toString()), data);
        assertChart(out.resolve("loss-vs-iteration.png"));
    }

    /** LIBSVM's own sample, heart_scale (270 rows, 13 features, labels -1/+1), as Debian's liblinear-tools ships it. */
    static final Path HEART_SCALE = Path.of("/usr/share/doc/liblinear-tools/examples/heart_scale");

    @Test
    void trainsOnLibsvmsHeartScaleLikeStockMllib(@TempDir final Path dir) throws IOException {
        assumeTrue(
                Files.isReadable(HEART_SCALE),
                "NOT RUN: " + HEART_SCALE + " is missing (Debian package liblinear-tools)");
        final Run run = train(
                "--libsvm",
                HEART_SCALE.toString(),
                "--max-iter",
                "20",
                "--reg-param",
                "0.01",
                "--compare",
                "--seed",
                Long.toString(SEED),
                "--output",
                dir.resolve("out").toString());
        assertTrue(run.stdout.contains("labels: -1 and +1 read as 0 and 1"), run.stdout);
        final List<String[]> table = table(run.stdout);
        assertEquals(3, table.size(), run.stdout);
        final String[] ours = table.get(1);
        final String[] stock = table.get(2);
        assertEquals(ours[2], stock[2], "iterations");
        assertEquals(
                Double.parseDouble(stock[3]),
                Double.parseDouble(ours[3]),
                1e-9 * Math.abs(Double.parseDouble(stock[3])),
                "final loss");
        // Published linear models reach about 0.9 AUC on this set; a held-out fifth of 270 rows is noisy.
        final double auc = Double.parseDouble(ours[4]);
        assertTrue(auc > 0.8 && auc <= 1, "AUC " + auc);
        assertEquals(13, run.results.get(0).model().numFeatures());
    }

    @Test
    void readsParquetWithNamedColumns(@TempDir final Path dir) throws IOException {
        final Dataset<Row> data = LogisticRegressionBench.sparse(spark.session(), 900, 30, 4, 6, 2, SEED + 3)
                .withColumnRenamed("label", "y")
                .withColumnRenamed("features", "x");
        final Path file = dir.resolve("data.parquet");
        data.write().parquet(file.toString());
        final Path out = dir.resolve("out");
        final Run run = train(
                "--parquet",
                file.toString(),
                "--label-col",
                "y",
                "--features-col",
                "x",
                "--max-iter",
                "5",
                "--family",
                "multinomial",
                "--precision",
                "fp32",
                "--test-fraction",
                "0.3",
                "--seed",
                Long.toString(SEED),
                "--output",
                out.toString());
        final List<String[]> table = table(run.stdout);
        assertEquals("test accuracy", table.get(0)[4]);
        final TrainLogisticRegression.Trained r = run.results.get(0);
        assertEquals(4, r.model().numClasses());
        assertEquals(5, r.iterations());
        final Dataset<Row> probe = data.withColumnRenamed("y", "label").withColumnRenamed("x", "features");
        assertSamePredictions(r.model(), LogisticRegressionModel.load(r.saved().toString()), probe);
        data.unpersist();
    }

    @Test
    void fashionMnistSample(@TempDir final Path dir) throws IOException {
        final Path fm = FashionMnist.defaultDirectory();
        assumeTrue(
                FashionMnist.available(fm, FashionMnist.Split.TRAIN), "dataset-fashion-mnist not installed in " + fm);
        final Run run = train(
                "--fashion-mnist",
                "--rows",
                "600",
                "--test-rows",
                "300",
                "--max-iter",
                "4",
                "--reg-param",
                "0.001",
                "--seed",
                Long.toString(SEED),
                "--output",
                dir.toString());
        assertTrue(run.stdout.contains("input: Fashion-MNIST"), run.stdout);
        final TrainLogisticRegression.Trained r = run.results.get(0);
        assertEquals(10, r.model().numClasses());
        assertEquals(784, r.model().numFeatures());
        assertTrue(r.metric() > 0.3, "accuracy " + r.metric());
    }

    @Test
    void mllibOnlyFitsStockMllibAlone(@TempDir final Path dir) throws IOException {
        final Path out = dir.resolve("out");
        final Run run = trainSmallGenerated("--mllib-only", out);
        assertEquals(1, run.results.size());
        assertEquals(TrainLogisticRegression.MLLIB, run.results.get(0).trainer());
        final List<String[]> table = table(run.stdout);
        assertEquals(2, table.size(), run.stdout);
        assertEquals(TrainLogisticRegression.MLLIB, table.get(1)[0]);
        assertFalse(run.stdout.contains("[switchml]"), run.stdout);
        assertTrue(run.stdout.contains("[mllib] iteration 1/8: loss"), run.stdout);
        assertTrue(Files.isDirectory(out.resolve("models").resolve(TrainLogisticRegression.MLLIB)));
        assertFalse(Files.exists(out.resolve("models").resolve(TrainLogisticRegression.SWITCHML)));
    }

    @Test
    void waitsForEveryTaskSlotBeforeReadingWithinItsBound() {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        final SparkContext sc = spark.session().sparkContext();
        final int slots = sc.defaultParallelism(); // local[N]: N task slots
        assertTrue(slots >= 2, "the session has " + slots + " task slots");
        assertTrue(ExecutorsReady.await(sc, slots, 60, out), buf.toString(StandardCharsets.UTF_8));
        assertTrue(
                buf.toString(StandardCharsets.UTF_8).startsWith("executors ready: " + slots + " task slots in "),
                buf.toString(StandardCharsets.UTF_8));
        // One slot more than there are: not ready, and the wait ends at its bound.
        buf.reset();
        final long t0 = System.nanoTime();
        assertFalse(ExecutorsReady.await(sc, slots + 1, 2, out));
        final double waited = (System.nanoTime() - t0) / 1e9;
        assertTrue(waited >= 2 && waited < 20, "waited " + waited + " s for a 2 s bound");
        assertTrue(
                buf.toString(StandardCharsets.UTF_8).contains("not all " + (slots + 1) + " task slots within 2 s"),
                buf.toString(StandardCharsets.UTF_8));
        // Nothing asked for (no spark.cores.max on a local master): no wait, no line.
        buf.reset();
        assertTrue(ExecutorsReady.await(sc, 60, out));
        assertEquals("", buf.toString(StandardCharsets.UTF_8));
    }

    /** Missing local paths are one line and exit 2 before Spark starts: the class's session is never touched. */
    @Test
    void missingPathsAreOneLineBeforeSparkStarts(@TempDir final Path dir) throws IOException {
        final Path none = dir.resolve("none");
        final Path file = Files.writeString(dir.resolve("a-file"), "x");
        final String[][] cases = {
            {"--libsvm", none.toString(), "--libsvm " + none + ": no such file or directory"},
            {"--parquet", none.toString(), "--parquet " + none + ": no such file or directory"},
            {
                "--fashion-mnist",
                dir.toString(),
                "--fashion-mnist " + dir + ": no Fashion-MNIST train files there (IDX "
                        + "images and labels, .gz or not)"
            },
            {"--fashion-mnist", none.toString(), "--fashion-mnist " + none + ": no such file or directory"},
            {
                "--output",
                file.resolve("out").toString(),
                "--output " + file.resolve("out") + ": " + file + " is a file, not a directory"
            }
        };
        for (final String[] c : cases) {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int code = TrainLogisticRegression.run(
                    new String[] {c[0], c[1], "--max-iter", "1"}, null, print(out), print(err));
            assertEquals(Cli.EXIT_USAGE, code, err.toString(StandardCharsets.UTF_8));
            assertEquals(
                    List.of("TrainLogisticRegression: " + c[2]),
                    err.toString(StandardCharsets.UTF_8).lines().toList());
            assertEquals("", out.toString(StandardCharsets.UTF_8));
        }
        // Had any of them reached Spark, its own session (this class's, the active one) would be stopped now.
        assertFalse(spark.session().sparkContext().isStopped());
    }

    /**
     * A malformed LIBSVM file: one line naming the file, the line and what is wrong, exit 2, and no task failed (no
     * retries); with --verbose the same line, then the trace.
     */
    @Test
    void malformedLibsvmIsOneLineNamingTheFileAndLine(@TempDir final Path dir) throws IOException {
        final Path file = Files.writeString(dir.resolve("bad.libsvm"), "1 1:0.5 2:1\n0 1:1\nx 1:a 2:b\n1 2:2\n");
        final Whole bad = runWithoutFailedTasks(
                "--libsvm", file.toString(), "--output", dir.resolve("out").toString());
        assertEquals(Cli.EXIT_USAGE, bad.code(), bad.err());
        assertEquals(
                List.of("TrainLogisticRegression: --libsvm " + file + " line 3: 'x 1:a 2:b': the label 'x' is not "
                        + "a number"),
                bad.err().lines().toList());

        final Whole verbose = runWithoutFailedTasks(
                "--libsvm", file.toString(), "--output", dir.resolve("out").toString(), "--verbose");
        assertEquals(Cli.EXIT_USAGE, verbose.code());
        assertEquals(bad.err().lines().findFirst(), verbose.err().lines().findFirst());
        assertTrue(verbose.err().contains("\tat org.switchml.examples.Inputs"), verbose.err());
    }

    @Test
    void aParquetColumnTheFileDoesNotHaveNamesTheColumnsItHas(@TempDir final Path dir) throws IOException {
        final Path file = dir.resolve("data.parquet");
        LogisticRegressionBench.sparse(spark.session(), 50, 10, 2, 3, 1, SEED + 7)
                .write()
                .parquet(file.toString());
        final String[][] cases = {
            {
                "--label-col",
                "y",
                "--parquet " + file + " has no column 'y' (--label-col); its columns: label (double), "
                        + "features (vector)"
            },
            {
                "--features-col",
                "x",
                "--parquet " + file + " has no column 'x' (--features-col); its columns: label "
                        + "(double), features (vector)"
            },
            {
                "--features-col",
                "label",
                "--parquet " + file + ": the features column 'label' is double, not an ML "
                        + "vector; its columns: label (double), features (vector)"
            }
        };
        for (final String[] c : cases) {
            final Whole r = runWithoutFailedTasks(
                    "--parquet",
                    file.toString(),
                    c[0],
                    c[1],
                    "--output",
                    dir.resolve("out").toString());
            assertEquals(Cli.EXIT_USAGE, r.code(), r.err());
            assertEquals(
                    List.of("TrainLogisticRegression: " + c[2]), r.err().lines().toList());
        }
    }

    /** Bare --fashion-mnist where the data set is not installed: one line, then generated data. */
    @Test
    void fashionMnistWithoutTheDataSetTrainsOnGeneratedData(@TempDir final Path dir) throws IOException {
        final String before = System.getProperty("switchml.fashionMnist.dir");
        System.setProperty("switchml.fashionMnist.dir", dir.toString());
        try {
            final Whole run = trainFromCommandLine(
                    "--fashion-mnist",
                    "--rows",
                    "600",
                    "--features",
                    "20",
                    "--max-iter",
                    "3",
                    "--seed",
                    Long.toString(SEED),
                    "--output",
                    dir.resolve("out").toString());
            assertEquals(0, run.code(), run.err());
            assertEquals(
                    List.of("Fashion-MNIST is not in " + dir + ": training on generated data (for Fashion-MNIST: "
                            + "apt-get install dataset-fashion-mnist, or --fashion-mnist DIR; for your data: --libsvm or "
                            + "--parquet)."),
                    run.out().lines().filter(l -> l.contains("Fashion-MNIST")).toList());
            assertTrue(run.out().contains("input: generated, 20 features"), run.out());
        } finally {
            if (before == null) {
                System.clearProperty("switchml.fashionMnist.dir");
            } else {
                System.setProperty("switchml.fashionMnist.dir", before);
            }
        }
    }

    @Test
    void usageErrorsExit2WithOneLineAndHelpExits0() {
        final String[][] bad = {
            {"--max-iter", "x"},
            {"--max-iter", "-1"},
            {"--rows", "0"},
            {"--family", "poisson"},
            {"--precision", "fp16"},
            {"--elastic-net-param", "2"},
            {"--test-fraction", "1"},
            {"--bogus"},
            {"--libsvm", "a", "--parquet", "b"},
            {"--generated", "--classes", "1"},
            {"--output"},
            {"--compare=maybe"},
            {"--compare", "--mllib-only"},
            {"--warm-up-iter", "-1"}
        };
        for (final String[] args : bad) {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int code = TrainLogisticRegression.run(args, null, print(out), print(err));
            final String text = err.toString(StandardCharsets.UTF_8);
            assertEquals(Cli.EXIT_USAGE, code, String.join(" ", args) + ": " + text);
            assertEquals("", out.toString(StandardCharsets.UTF_8));
            final String[] lines = text.split("\n");
            assertEquals(2, lines.length, text);
            assertTrue(lines[0].startsWith("TrainLogisticRegression: "), text);
            assertEquals("Try --help.", lines[1]);
            assertFalse(text.contains("\tat "), text);
        }
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertEquals(0, TrainLogisticRegression.run(new String[] {"--help"}, null, print(out), System.err));
        final String help = out.toString(StandardCharsets.UTF_8);
        for (final String flag : new String[] {
            "--libsvm",
            "--parquet",
            "--fashion-mnist",
            "--compare",
            "--max-iter",
            "--reg-param",
            "--elastic-net-param",
            "--tol",
            "--family",
            "--precision",
            "--checkpoint-interval",
            "--output",
            "--mllib-only",
            "--warm-up",
            "--verbose"
        }) {
            assertTrue(help.contains(flag), flag);
        }
        // --warm-up-iter, the name scripts use, is --warm-up.
        for (final String name : new String[] {"--warm-up", "--warm-up-iter"}) {
            final TrainLogisticRegression t = new TrainLogisticRegression();
            assertEquals(
                    Cli.PROCEED,
                    Cli.parse("TrainLogisticRegression", t, new String[] {name, "3"}, System.out, System.err));
            assertEquals(3, t.warmUpIter, name);
        }
    }

    // ------------------------------------------------------------------------------------ helpers

    private record Run(String stdout, List<TrainLogisticRegression.Trained> results) {}

    /** A whole run of the program in this class's session: exit code, stdout and stderr. */
    private record Whole(int code, String out, String err) {}

    private static Whole trainFromCommandLine(final String... args) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int code = TrainLogisticRegression.run(args, spark.session(), print(out), print(err));
        System.out.print(out.toString(StandardCharsets.UTF_8));
        return new Whole(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@link #trainFromCommandLine}, checking that no Spark task failed meanwhile (no retries of a bad record). */
    private static Whole runWithoutFailedTasks(final String... args) {
        final AtomicReference<Whole> r = new AtomicReference<>();
        final int failed = spark.failedTasks(() -> r.set(trainFromCommandLine(args)));
        assertEquals(0, failed, "tasks failed: " + r.get().err());
        return r.get();
    }

    /** A small generated problem (3 classes, 40 features, 8 iterations) with {@code trainers}' flag. */
    private static Run trainSmallGenerated(final String trainers, final Path out) throws IOException {
        return train(
                "--generated",
                "--rows",
                "1500",
                "--features",
                "40",
                "--classes",
                "3",
                "--nnz",
                "8",
                "--max-iter",
                "8",
                trainers,
                "--seed",
                Long.toString(SEED),
                "--output",
                out.toString());
    }

    /** Parses {@code args} as the program does and trains in this class's session. */
    private static Run train(final String... args) throws IOException {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final TrainLogisticRegression t = new TrainLogisticRegression();
        final PrintStream out = print(buf);
        assertEquals(Cli.PROCEED, Cli.parse("TrainLogisticRegression", t, args, out, System.err));
        final List<TrainLogisticRegression.Trained> results = t.train(spark.session(), out);
        final String text = buf.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        return new Run(text, results);
    }

    private static PrintStream print(final ByteArrayOutputStream buf) {
        return new PrintStream(buf, true, StandardCharsets.UTF_8);
    }

    /** The printed table: its header line and the rows below it, split into columns. */
    private static List<String[]> table(final String stdout) {
        final List<String[]> out = new ArrayList<>();
        boolean in = false;
        for (final String line : stdout.split("\n")) {
            if (line.startsWith("trainer ")) {
                in = true;
            } else if (line.isBlank()) {
                in = false;
            }
            if (in) {
                out.add(line.trim().split("\\s{2,}"));
            }
        }
        assertFalse(out.isEmpty(), stdout);
        return out;
    }

    /** A PNG that decodes, of a chart's size, with more than a couple of colours (not blank). */
    private static void assertChart(final Path png) throws IOException {
        final BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, png + " does not decode");
        assertTrue(img.getWidth() >= 400 && img.getHeight() >= 300, png.toString());
        final Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                colours.add(img.getRGB(x, y));
            }
        }
        assertTrue(colours.size() > 10, png + ": " + colours.size() + " colours");
    }

    private static void assertSamePredictions(
            final LogisticRegressionModel fitted, final LogisticRegressionModel loaded, final Dataset<Row> data) {
        final List<Row> a =
                fitted.transform(data).select("prediction", "probability").collectAsList();
        final List<Row> b =
                loaded.transform(data).select("prediction", "probability").collectAsList();
        assertEquals(a.size(), b.size());
        assertFalse(a.isEmpty());
        assertEquals(a, b);
    }

    /** Seeded binary rows: label 1 when a noisy linear score of dense Gaussian features is positive. */
    private static Dataset<Row> binary(final int n, final int features, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] w = new double[features];
        for (int j = 0; j < features; j++) {
            w[j] = rnd.nextGaussian();
        }
        final List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final double[] x = new double[features];
            double score = 0.3 * rnd.nextGaussian();
            for (int j = 0; j < features; j++) {
                x[j] = rnd.nextGaussian();
                score += w[j] * x[j];
            }
            rows.add(RowFactory.create(score > 0 ? 1.0 : 0.0, Vectors.dense(x)));
        }
        final StructType schema = new StructType(new StructField[] {
            new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())
        });
        return spark.session().createDataFrame(rows, schema);
    }
}

package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.Evaluator;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructType;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.switchml.examples.data.FashionMnist;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import org.switchml.spark.ml.linear.FitListener;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.spark.ml.linear.IterationReport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Trains {@link SwitchMLLogisticRegression} on LIBSVM text, Parquet, Fashion-MNIST or generated data and,
 * with {@code --compare}, stock MLlib {@code LogisticRegression} on the same cached rows with the same
 * params ({@code --mllib-only}: stock MLlib alone, a baseline in an application of its own). Prints each
 * iteration as it ends and a table (fit time, iterations, final loss, test accuracy or AUC, what went
 * through the switch); writes the models, the per-iteration loss history (CSV) and two charts (PNG: loss
 * against time and against iteration) under {@code --output}.
 *
 * <pre>
 * bin/switchml-submit --master 'local-cluster[2,2,2048]' --class org.switchml.examples.TrainLogisticRegression \
 *     examples/target/examples.jar --compare --output /tmp/lr
 * </pre>
 */
@Command(
        name = "TrainLogisticRegression",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        versionProvider = Cli.Version.class,
        description = {
            "Fits SwitchMLLogisticRegression (and, with --compare, stock MLlib LogisticRegression on the",
            "same data and params; with --mllib-only, stock MLlib alone), evaluates on a held-out test set,",
            "saves the models and writes the loss history (history.csv) and charts (loss-vs-time.png,",
            "loss-vs-iteration.png) under --output.",
            "Input: one of --libsvm, --parquet, --fashion-mnist, --generated; without any (or with --fashion-mnist",
            "and no DIR), Fashion-MNIST from the dataset-fashion-mnist package when installed, else generated data,",
            "with a line saying so.",
            "Run it through bin/switchml-submit, which sets the master (--master) and the plugin."
        },
        footer = {
            "",
            "Exit codes: 0 ok, 1 the run failed, 2 bad flags or input it cannot use (a missing path, a",
            "malformed LIBSVM line, a column the Parquet file does not have)."
        })
public final class TrainLogisticRegression implements Cli.Validated {
    /** Name of the SwitchML trainer in the table, the CSV and the charts. */
    static final String SWITCHML = "switchml";
    /** Name of the stock MLlib trainer. */
    static final String MLLIB = "mllib";
    /** Bound of the wait for every task slot before the input is read (seconds). */
    static final long EXECUTORS_READY_TIMEOUT_S = 120;

    @CommandLine.Spec
    CommandSpec spec;

    // Strings, not Paths: Spark reads them, and they may be URIs (hdfs://...).
    @Option(
            names = "--libsvm",
            paramLabel = "PATH",
            description =
                    "LIBSVM text file or directory (Spark's libsvm source; " + "any path Spark reads, e.g. hdfs://...)")
    String libsvm;

    @Option(
            names = "--parquet",
            paramLabel = "PATH",
            description =
                    "Parquet file or directory with a label and a " + "features (vector) column (any path Spark reads)")
    String parquet;

    @Option(
            names = "--fashion-mnist",
            paramLabel = "DIR",
            arity = "0..1",
            fallbackValue = "",
            description = "Fashion-MNIST IDX files in DIR; without DIR, the dataset-fashion-mnist package's, or "
                    + "generated data when it is not installed")
    String fashionMnist;

    @Option(names = "--generated", description = "seeded synthetic sparse data (see --features, --classes, --nnz)")
    boolean generated;

    @Option(
            names = "--label-col",
            paramLabel = "NAME",
            defaultValue = "label",
            description = "Parquet: label column (default ${DEFAULT-VALUE})")
    String labelCol;

    @Option(
            names = "--features-col",
            paramLabel = "NAME",
            defaultValue = "features",
            description = "Parquet: features column (default ${DEFAULT-VALUE})")
    String featuresCol;

    int rows = -1;
    int testRows = 10_000;
    double testFraction = 0.2;
    int classes = 10;
    int nnz = 20;

    @Option(
            names = "--seed",
            paramLabel = "S",
            defaultValue = "1",
            description = "seed of the sample, the split and generated data (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    final DataOptions data = new DataOptions(1_000);

    @Mixin
    final FitOptions fit = new FitOptions(100, 0);

    double elasticNetParam;
    double tol = 1e-6;
    String family = "auto";
    String precision = "fp64";
    int checkpointInterval;

    @Option(names = "--compare", description = "also fit stock MLlib LogisticRegression on the same data and params")
    boolean compare;

    @Option(
            names = "--mllib-only",
            description = "fit only stock MLlib LogisticRegression: a baseline in an "
                    + "application of its own, so that neither fit runs in executors the other has warmed")
    boolean mllibOnly;

    @Option(
            names = "--output",
            paramLabel = "DIR",
            defaultValue = "switchml-lr-output",
            description = "where the models, history.csv and the charts go (default ${DEFAULT-VALUE})")
    Path output;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    @Option(
            names = "--rows",
            paramLabel = "N",
            description =
                    "training rows: a seeded sample (Fashion-MNIST default 10000 of 60000; generated default 20000 before the split; files: all)")
    void rows(final int v) {
        rows = Cli.atLeast(spec, "--rows", v, 1);
    }

    @Option(
            names = "--test-rows",
            paramLabel = "N",
            description = "Fashion-MNIST: rows of its test set used (default 10000, all)")
    void testRows(final int v) {
        testRows = Cli.atLeast(spec, "--test-rows", v, 1);
    }

    @Option(
            names = "--test-fraction",
            paramLabel = "F",
            description = "other inputs: share of the rows held out for the test (default 0.2)")
    void testFraction(final double v) {
        testFraction = Cli.openUnitInterval(spec, "--test-fraction", v);
    }

    @Option(
            names = "--classes",
            paramLabel = "K",
            description = "generated: classes (default 10; 2 gives a binary problem)")
    void classes(final int v) {
        classes = Cli.atLeast(spec, "--classes", v, 2);
    }

    @Option(names = "--nnz", paramLabel = "N", description = "generated: non-zero features per row (default 20)")
    void nnz(final int v) {
        nnz = Cli.atLeast(spec, "--nnz", v, 1);
    }

    @Option(names = "--elastic-net-param", paramLabel = "A", description = "elasticNetParam in [0, 1] (default 0: L2)")
    void elasticNetParam(final double v) {
        elasticNetParam = Cli.closedUnitInterval(spec, "--elastic-net-param", v);
    }

    @Option(names = "--tol", paramLabel = "T", description = "tol (default 1e-6)")
    void tol(final double v) {
        tol = Cli.nonNegative(spec, "--tol", v);
    }

    @Option(names = "--family", paramLabel = "F", description = "auto, binomial or multinomial (default auto)")
    void family(final String v) {
        family = Cli.oneOf(spec, "--family", v, "auto", "binomial", "multinomial");
    }

    @Option(
            names = "--precision",
            paramLabel = "P",
            description = "sums through the switch: fp64 or fp32 (default fp64)")
    void precision(final String v) {
        precision = Cli.oneOf(spec, "--precision", v, "fp64", "fp32");
    }

    @Option(
            names = "--checkpoint-interval",
            paramLabel = "N",
            description = "SwitchML: return the optimizer state to the driver every N evaluations (default 0: never)")
    void checkpointInterval(final int v) {
        checkpointInterval = Cli.atLeast(spec, "--checkpoint-interval", v, 0);
    }

    int warmUpIter;

    @Option(
            names = "--warm-up",
            paramLabel = "N",
            description = "first fit each trainer untimed with maxIter N, in "
                    + "the same application: what a session that fits again sees, its executors' JIT and the switch warm "
                    + "(default 0: the timed fit is the application's first; --warm-up-iter N also works)")
    void warmUpIter(final int v) {
        warmUpIter = Cli.atLeast(spec, "--warm-up", v, 0);
    }

    /** The earlier name of {@code --warm-up}, which scripts use. */
    @Option(names = "--warm-up-iter", paramLabel = "N", hidden = true)
    void warmUpIterAlias(final int v) {
        warmUpIter = Cli.atLeast(spec, "--warm-up-iter", v, 0);
    }

    @Override
    public void validate(final CommandLine cl) {
        int inputs = 0;
        for (final Object o : new Object[] {libsvm, parquet, fashionMnist}) {
            inputs += o == null ? 0 : 1;
        }
        inputs += generated ? 1 : 0;
        if (inputs > 1) {
            throw Cli.usage(cl, "give at most one of --libsvm, --parquet, --fashion-mnist, --generated");
        }
        if (compare && mllibOnly) {
            throw Cli.usage(cl, "give at most one of --compare, --mllib-only");
        }
        if (family.equals("binomial") && generated && classes > 2) {
            throw Cli.usage(cl, "--family binomial needs --classes 2 with --generated, got " + classes);
        }
    }

    /** One entry of a fit's objective history. */
    record Point(int iteration, double seconds, double loss) {}

    /** One trainer's fit and evaluation; {@code saved} is where {@code model} was written. */
    record Trained(
            String trainer,
            double seconds,
            int iterations,
            double finalLoss,
            String metricName,
            double metric,
            FitReport report,
            List<Point> history,
            LogisticRegressionModel model,
            Path saved) {}

    /** The held-out data and where it came from. */
    record Input(String description, Dataset<Row> train, Dataset<Row> test) {}

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, null, System.out, System.err));
    }

    /**
     * Parses the command line and runs; returns the exit code. With {@code spark} null it makes (and
     * stops) its own session from spark-submit's configuration; bad flags never start Spark.
     */
    static int run(final String[] args, final SparkSession spark, final PrintStream out, final PrintStream err) {
        final TrainLogisticRegression t = new TrainLogisticRegression();
        final int parsed = Cli.parse(NAME, t, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        // Missing local paths before Spark starts.
        final int checked = Cli.guard(NAME, out, err, t.verbose, () -> {
            t.checkPaths();
            return Cli.PROCEED;
        });
        if (checked != Cli.PROCEED) {
            return checked;
        }
        return Cli.inSpark(NAME, spark, out, err, t.verbose, session -> {
            t.train(session, out);
            return 0;
        });
    }

    /** Name in messages. */
    static final String NAME = "TrainLogisticRegression";

    /** Fails with one line when a local input path is missing, or when --output cannot be written. */
    void checkPaths() {
        if (libsvm != null) {
            Inputs.requireReadable("--libsvm", libsvm);
        }
        if (parquet != null) {
            Inputs.requireReadable("--parquet", parquet);
        }
        if (fashionMnist != null && !fashionMnist.isEmpty()) {
            final Path dir = Paths.get(fashionMnist);
            Inputs.requireReadable("--fashion-mnist", fashionMnist);
            for (final FashionMnist.Split split : FashionMnist.Split.values()) {
                if (!FashionMnist.available(dir, split)) {
                    throw new Cli.BadInput("--fashion-mnist " + fashionMnist + ": no Fashion-MNIST "
                            + split.name().toLowerCase(Locale.ROOT)
                            + " files there (IDX images and labels, .gz or not)");
                }
            }
        }
        Inputs.requireWritableDirectory("--output", output);
    }

    /** Loads the input, fits, evaluates, prints the table and writes the output directory. */
    List<Trained> train(final SparkSession spark, final PrintStream out) throws IOException {
        // Read the input across all the executors asked for, not only those that fetched the jars first.
        ExecutorsReady.await(spark.sparkContext(), EXECUTORS_READY_TIMEOUT_S, out);
        final Input in = input(spark, out);
        final long trainRows = in.train().count();
        final long testCount = in.test().count();
        out.printf(
                Locale.ROOT,
                "input: %s; %d training rows, %d test rows, %d partitions, seed %d%n",
                in.description(),
                trainRows,
                testCount,
                data.partitions,
                seed);
        out.printf(
                Locale.ROOT,
                "params: maxIter %d, regParam %g, elasticNetParam %g, tol %g, family %s, precision %s, "
                        + "checkpointInterval %d; master %s%n",
                fit.maxIter,
                fit.regParam,
                elasticNetParam,
                tol,
                family,
                precision,
                checkpointInterval,
                spark.sparkContext().master());
        Files.createDirectories(output);
        // The trainers this command runs, in order; each fit gets an estimator of its own.
        final Map<String, Supplier<LogisticRegression>> trainers = new LinkedHashMap<>();
        if (!mllibOnly) {
            trainers.put(SWITCHML, () -> params(ours()));
        }
        if (compare || mllibOnly) {
            trainers.put(MLLIB, () -> params(new LogisticRegression()));
        }
        if (warmUpIter > 0) {
            for (final Map.Entry<String, Supplier<LogisticRegression>> t : trainers.entrySet()) {
                warmUp(t.getKey(), t.getValue().get(), in, out);
            }
        }
        final List<Trained> results = new ArrayList<>();
        for (final Map.Entry<String, Supplier<LogisticRegression>> t : trainers.entrySet()) {
            results.add(fit(spark, t.getKey(), t.getValue().get(), in, out));
        }
        in.train().unpersist();
        in.test().unpersist();
        out.println();
        printTable(results, out);
        final Path csv = output.resolve("history.csv");
        writeHistory(results, csv);
        final Path byTime = output.resolve("loss-vs-time.png");
        final Path byIteration = output.resolve("loss-vs-iteration.png");
        plot(results, true, byTime);
        plot(results, false, byIteration);
        out.println();
        out.println("wrote " + csv + ", " + byTime + ", " + byIteration);
        for (final Trained r : results) {
            out.println("model (" + r.trainer() + "): " + r.saved() + "  (LogisticRegressionModel.load)");
        }
        return results;
    }

    /** The drop-in estimator with this command's SwitchML settings. */
    private SwitchMLLogisticRegression ours() {
        return new SwitchMLLogisticRegression().setPrecision(precision).setCheckpointInterval(checkpointInterval);
    }

    private LogisticRegression params(final LogisticRegression lr) {
        return lr.setMaxIter(fit.maxIter)
                .setRegParam(fit.regParam)
                .setElasticNetParam(elasticNetParam)
                .setTol(tol)
                .setFamily(family);
    }

    // ------------------------------------------------------------------------------------ input

    /**
     * Binary LIBSVM files often label their classes -1 and +1; MLlib wants 0 and 1. Such labels are mapped (and
     * the mapping printed); any other labels are left as they are, for MLlib to check.
     */
    static Dataset<Row> binaryLabelsFromZero(final Dataset<Row> df, final PrintStream out) {
        final List<Row> labels = df.select("label").distinct().limit(3).collectAsList();
        final boolean plusMinusOne =
                labels.size() == 2 && labels.stream().allMatch(r -> Math.abs(r.getDouble(0)) == 1.0);
        if (!plusMinusOne) {
            return df;
        }
        out.println("labels: -1 and +1 read as 0 and 1");
        return df.withColumn(
                "label",
                functions.when(functions.col("label").equalTo(-1.0), 0.0).otherwise(1.0));
    }

    private Input input(final SparkSession spark, final PrintStream out) {
        if (libsvm != null) {
            // Every line as Spark's reader will parse it, so a bad one is a line here, not four failed tasks.
            Inputs.checkLibsvm(spark, "--libsvm", libsvm);
            return split(
                    "LIBSVM " + libsvm,
                    binaryLabelsFromZero(spark.read().format("libsvm").load(libsvm), out),
                    true);
        }
        if (parquet != null) {
            return split("Parquet " + parquet, parquet(spark), true);
        }
        final boolean givenDir = fashionMnist != null && !fashionMnist.isEmpty();
        final Path fmDir = givenDir ? Paths.get(fashionMnist) : FashionMnist.defaultDirectory();
        if (givenDir
                || (!generated
                        && FashionMnist.available(fmDir, FashionMnist.Split.TRAIN)
                        && FashionMnist.available(fmDir, FashionMnist.Split.TEST))) {
            final FashionMnist trainSet;
            final FashionMnist testSet;
            try {
                trainSet = FashionMnist.load(fmDir, FashionMnist.Split.TRAIN);
                testSet = FashionMnist.load(fmDir, FashionMnist.Split.TEST);
            } catch (final IOException | IllegalArgumentException e) {
                throw new Cli.BadInput("--fashion-mnist " + fmDir + ": " + e.getMessage(), e);
            }
            final int n = rows > 0 ? Math.min(rows, trainSet.size()) : 10_000;
            final Dataset<Row> train =
                    LogisticRegressionBench.fashionMnist(spark, trainSet, trainSet.sample(n, seed), data.partitions);
            final Dataset<Row> test = LogisticRegressionBench.fashionMnist(
                    spark, testSet, testSet.sample(Math.min(testRows, testSet.size()), seed), data.partitions);
            return new Input("Fashion-MNIST " + fmDir + " (784 features, 10 classes; its own test set)", train, test);
        }
        if (!generated) {
            out.println("Fashion-MNIST is not in " + fmDir + ": training on generated data (for Fashion-MNIST: apt-get "
                    + "install dataset-fashion-mnist, or --fashion-mnist DIR; for your data: --libsvm or --parquet).");
        }
        final int n = rows > 0 ? rows : 20_000;
        final int features = data.features;
        final Dataset<Row> df = LogisticRegressionBench.sparse(
                spark, n, features, classes, Math.min(nnz, features), data.partitions, seed);
        final Input in = split(
                String.format(
                        Locale.ROOT,
                        "generated, %d features, %d classes, %d non-zeros per row",
                        features,
                        classes,
                        Math.min(nnz, features)),
                df,
                false);
        df.unpersist();
        return in;
    }

    /**
     * The Parquet input's label and features columns, as {@code label} (double) and {@code features}; a column the
     * file does not have, or of a type that cannot be, is one line naming the columns it has.
     */
    private Dataset<Row> parquet(final SparkSession spark) {
        final Dataset<Row> raw = spark.read().parquet(parquet);
        final StructType schema = raw.schema();
        final List<String> has = List.of(schema.fieldNames());
        final String columns = String.join(
                ", ",
                schema.fields().length == 0
                        ? List.of("none")
                        : Arrays.stream(schema.fields())
                                .map(f -> f.name() + " (" + f.dataType().simpleString() + ")")
                                .toList());
        for (final String[] c : new String[][] {{labelCol, "--label-col"}, {featuresCol, "--features-col"}}) {
            if (!has.contains(c[0])) {
                throw new Cli.BadInput("--parquet " + parquet + " has no column '" + c[0] + "' (" + c[1] + "); its "
                        + "columns: " + columns);
            }
        }
        final DataType label = schema.apply(labelCol).dataType();
        if (!(label instanceof NumericType)) {
            throw new Cli.BadInput("--parquet " + parquet + ": the label column '" + labelCol + "' is "
                    + label.simpleString() + ", not a number; its columns: " + columns);
        }
        final DataType features = schema.apply(featuresCol).dataType();
        if (!features.equals(SQLDataTypes.VectorType())) {
            throw new Cli.BadInput("--parquet " + parquet + ": the features column '" + featuresCol + "' is "
                    + features.simpleString() + ", not an ML vector; its columns: " + columns);
        }
        return raw.select(
                functions.col(labelCol).cast("double").as("label"),
                functions.col(featuresCol).as("features"));
    }

    /** A seeded random split of {@code df}: training rows (the first --rows of them if {@code limit}) and test rows. */
    private Input split(final String description, final Dataset<Row> df, final boolean limit) {
        final Dataset<Row>[] parts =
                df.repartition(data.partitions).randomSplit(new double[] {1 - testFraction, testFraction}, seed);
        Dataset<Row> train = parts[0];
        if (limit && rows > 0) {
            train = train.limit(rows);
        }
        train = train.cache();
        final Dataset<Row> test = parts[1].cache();
        return new Input(
                description
                        + String.format(
                                Locale.ROOT, " (random split %.0f/%.0f)", 100 * (1 - testFraction), 100 * testFraction),
                train,
                test);
    }

    // ------------------------------------------------------------------------------------ fits

    /** An untimed fit with maxIter {@link #warmUpIter}, reported in one line; its model is dropped. */
    private void warmUp(final String trainer, final LogisticRegression lr, final Input in, final PrintStream out) {
        final long t0 = System.nanoTime();
        final LogisticRegressionModel model = lr.setMaxIter(warmUpIter).fit(in.train());
        out.printf(
                Locale.ROOT,
                "[%s] warm-up fit: %d iterations in %.2f s%n",
                trainer,
                model.summary().totalIterations(),
                (System.nanoTime() - t0) / 1e9);
    }

    private Trained fit(
            final SparkSession spark,
            final String trainer,
            final LogisticRegression lr,
            final Input in,
            final PrintStream out)
            throws IOException {
        out.printf("%n[%s] fitting ...%n", trainer);
        final List<Point> history = new ArrayList<>();
        final LogisticRegressionModel model;
        final double seconds;
        final FitReport report;
        if (lr instanceof SwitchMLLogisticRegression ours) {
            final long t0 = System.nanoTime();
            ours.setListener(new FitListener() {
                @Override
                public void onIteration(final IterationReport r) {
                    final double s = (System.nanoTime() - t0) / 1e9;
                    synchronized (history) {
                        history.add(new Point(r.iteration(), s, r.loss()));
                    }
                    out.printf(
                            Locale.ROOT,
                            "[%s] iteration %d/%d: loss %.10g, %.2f s, %.3g MB through the switch per " + "worker%s%n",
                            trainer,
                            r.iteration(),
                            r.maxIter(),
                            r.loss(),
                            s,
                            r.megabytes(),
                            r.retransmissions() > 0 ? ", " + r.retransmissions() + " retransmissions" : "");
                }
            });
            model = ours.fit(in.train());
            seconds = (System.nanoTime() - t0) / 1e9;
            report = ours.lastFit();
        } else {
            try (MllibProgress progress = new MllibProgress(
                    spark.sparkContext(), lr.getMaxIter(), line -> out.println("[" + trainer + "] " + line))) {
                final long t0 = System.nanoTime();
                model = lr.fit(in.train());
                seconds = (System.nanoTime() - t0) / 1e9;
                final double[] h = model.summary().objectiveHistory();
                final double[] at = progress.seconds(h.length);
                for (int i = 0; i < h.length; i++) {
                    history.add(new Point(i, at[i], h[i]));
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            report = null;
        }
        out.printf(Locale.ROOT, "[%s] fitted in %.2f s; evaluating on the test rows ...%n", trainer, seconds);
        final double[] h = model.summary().objectiveHistory();
        final Dataset<Row> predictions = model.transform(in.test());
        final boolean binary = model.numClasses() == 2;
        final Evaluator evaluator = binary
                ? new BinaryClassificationEvaluator().setMetricName("areaUnderROC")
                : new MulticlassClassificationEvaluator().setMetricName("accuracy");
        final double metric = evaluator.evaluate(predictions);
        final Path path = output.resolve("models").resolve(trainer);
        model.write().overwrite().save(path.toString());
        final List<Point> points = new ArrayList<>();
        synchronized (history) {
            points.addAll(history);
        }
        // Entries no report timed (a fit that fell back to stock MLlib reports none): their loss, no time.
        for (int i = points.size(); i < h.length; i++) {
            points.add(new Point(i, Double.NaN, h[i]));
        }
        out.printf(
                Locale.ROOT,
                "[%s] done: %.2f s, %d iterations, final loss %.10g, test %s %.4f%n",
                trainer,
                seconds,
                model.summary().totalIterations(),
                h[h.length - 1],
                binary ? "AUC" : "accuracy",
                metric);
        if (report != null) {
            out.printf("[%s] %s%n", trainer, report);
        }
        return new Trained(
                trainer,
                seconds,
                model.summary().totalIterations(),
                h[h.length - 1],
                binary ? "test AUC" : "test accuracy",
                metric,
                report,
                points,
                model,
                path);
    }

    // ------------------------------------------------------------------------------------ output

    /** The table's column names, in order. */
    static final List<String> COLUMNS = List.of(
            "trainer", "fit s", "iterations", "final loss", "test metric", "switch MB", "retransmissions", "fallbacks");

    static void printTable(final List<Trained> results, final PrintStream out) {
        final List<String[]> rowsOut = new ArrayList<>();
        final List<String> header = new ArrayList<>(COLUMNS);
        header.set(4, results.get(0).metricName());
        rowsOut.add(header.toArray(new String[0]));
        for (final Trained r : results) {
            final FitReport rep = r.report();
            rowsOut.add(new String[] {
                r.trainer(),
                String.format(Locale.ROOT, "%.2f", r.seconds()),
                Integer.toString(r.iterations()),
                String.format(Locale.ROOT, "%.10g", r.finalLoss()),
                String.format(Locale.ROOT, "%.4f", r.metric()),
                rep == null
                        ? "-"
                        : String.format(Locale.ROOT, "%.3g", rep.traffic().megabytes()),
                rep == null
                        ? "-"
                        : rep.traffic().retransmissions() < 0
                                ? "n/a"
                                : Long.toString(rep.traffic().retransmissions()),
                rep == null ? "-" : Integer.toString(rep.traffic().fallbacks())
            });
        }
        final int[] width = new int[header.size()];
        for (final String[] row : rowsOut) {
            for (int c = 0; c < row.length; c++) {
                width[c] = Math.max(width[c], row[c].length());
            }
        }
        for (final String[] row : rowsOut) {
            final StringBuilder sb = new StringBuilder();
            for (int c = 0; c < row.length; c++) {
                if (c > 0) {
                    sb.append("  ");
                }
                // Names left, numbers right.
                sb.append(String.format(c == 0 ? "%-" + width[c] + "s" : "%" + width[c] + "s", row[c]));
            }
            out.println(sb.toString().stripTrailing());
        }
    }

    /** {@code trainer,iteration,seconds,loss}, one row per entry of each fit's objective history. */
    static void writeHistory(final List<Trained> results, final Path csv) throws IOException {
        try (Writer w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
            w.write("trainer,iteration,seconds,loss\n");
            for (final Trained r : results) {
                for (final Point p : r.history()) {
                    w.write(String.format(
                            Locale.ROOT,
                            "%s,%d,%s,%.17g%n",
                            r.trainer(),
                            p.iteration(),
                            Double.isNaN(p.seconds()) ? "" : String.format(Locale.ROOT, "%.4f", p.seconds()),
                            p.loss()));
                }
            }
        }
    }

    /** Loss against seconds since the fit started ({@code byTime}) or against the iteration, every trainer. */
    static void plot(final List<Trained> results, final boolean byTime, final Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        final XYChart chart = new XYChartBuilder()
                .width(900)
                .height(560)
                .title("Training loss " + (byTime ? "against time" : "by iteration"))
                .xAxisTitle(byTime ? "seconds since the fit started" : "iteration")
                .yAxisTitle("loss")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE).setMarkerSize(5);
        for (final Trained r : results) {
            final List<Point> pts = r.history().stream()
                    .filter(p -> !byTime || !Double.isNaN(p.seconds()))
                    .toList();
            if (pts.isEmpty()) {
                continue;
            }
            final double[] x = new double[pts.size()];
            final double[] y = new double[pts.size()];
            for (int i = 0; i < x.length; i++) {
                x[i] = byTime ? pts.get(i).seconds() : pts.get(i).iteration();
                y[i] = pts.get(i).loss();
            }
            chart.addSeries(r.trainer(), x, y);
        }
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}

package org.switchml.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.ml.feature.FeatureHasher;
import org.apache.spark.ml.feature.OneHotEncoder;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * A Spark ML {@code Pipeline} with {@link SwitchMLLogisticRegression} as its last stage, on a small
 * customer-churn table: the label indexed from {@code churned}, the categorical columns indexed and one-hot
 * encoded (or, with {@code --hashing}, every input column hashed by {@code FeatureHasher}), the features
 * assembled, then the drop-in estimator. Fits on a seeded split, saves the {@code PipelineModel}, loads it
 * back with {@code PipelineModel.load}, evaluates both (AUC and accuracy) and checks that they predict the
 * same on every test row (exit 1 otherwise).
 *
 * <p>The table shipped in the jar ({@code churn.csv}, 400 synthetic customers) is made by
 * {@code examples/data/make-churn-csv.py}, a seeded generator whose comment gives the model behind it.
 */
@Command(
        name = "TrainPipeline",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        versionProvider = Cli.Version.class,
        description = {
            "Fits a Pipeline (StringIndexer, OneHotEncoder or FeatureHasher, VectorAssembler,",
            "SwitchMLLogisticRegression) on a customer-churn table, saves the PipelineModel, loads it back and",
            "checks that both give the same predictions. Run it through bin/switchml-submit.",
            ""
        },
        footer = {
            "",
            "Exit codes: 0 ok, 1 the run failed or the loaded model predicted differently, 2 bad flags or a",
            "CSV it cannot use (missing, a column missing, an empty or non-numeric field)."
        })
public final class TrainPipeline {
    /** The table in the jar. */
    static final String RESOURCE = "churn.csv";

    private static final String[] CATEGORICAL = {"contract", "internet", "payment"};
    private static final String[] NUMERIC = {"tenure_months", "monthly_charges", "support_calls", "senior"};
    /** The columns a table must have (any others are left alone). */
    private static final List<String> COLUMNS = List.of(
            "customer",
            "tenure_months",
            "monthly_charges",
            "contract",
            "internet",
            "payment",
            "support_calls",
            "senior",
            "churned");

    @CommandLine.Spec
    CommandSpec spec;

    @Option(
            names = "--csv",
            paramLabel = "PATH",
            description = "a CSV with the columns of the shipped churn.csv "
                    + "(header: customer,tenure_months,monthly_charges,contract,internet,payment,support_calls,senior,churned); "
                    + "default: the shipped one; any path Spark reads)")
    String csv;

    @Option(
            names = "--hashing",
            description = "hash every input column with FeatureHasher instead of indexing and "
                    + "one-hot encoding the categorical ones")
    boolean hashing;

    @Option(
            names = "--output",
            paramLabel = "DIR",
            defaultValue = "switchml-pipeline-output",
            description = "where the PipelineModel goes (DIR/pipeline-model; default ${DEFAULT-VALUE})")
    Path output;

    @Option(
            names = "--seed",
            paramLabel = "S",
            defaultValue = "7",
            description = "seed of the split (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    @Mixin
    final FitOptions fit = new FitOptions(50, 0.01);

    int hashFeatures = 64;
    double testFraction = 0.25;
    String precision = "fp64";

    @Option(names = "--hash-features", paramLabel = "N", description = "with --hashing: numFeatures (default 64)")
    void hashFeatures(final int v) {
        hashFeatures = Cli.atLeast(spec, "--hash-features", v, 2);
    }

    @Option(names = "--test-fraction", paramLabel = "F", description = "share of the rows held out (default 0.25)")
    void testFraction(final double v) {
        testFraction = Cli.openUnitInterval(spec, "--test-fraction", v);
    }

    @Option(
            names = "--precision",
            paramLabel = "P",
            description = "sums through the switch: fp64 or fp32 (default fp64)")
    void precision(final String v) {
        precision = Cli.oneOf(spec, "--precision", v, "fp64", "fp32");
    }

    /** What a run measured. */
    record Outcome(
            PipelineModel fitted,
            PipelineModel loaded,
            Path saved,
            Dataset<Row> test,
            double auc,
            double accuracy,
            double loadedAuc,
            double loadedAccuracy,
            long rows,
            long differing) {}

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, null, System.out, System.err));
    }

    /** As {@link TrainLogisticRegression#run}: parses, runs in {@code spark} (or its own session), returns the exit code. */
    static int run(final String[] args, final SparkSession spark, final PrintStream out, final PrintStream err) {
        final TrainPipeline t = new TrainPipeline();
        final int parsed = Cli.parse("TrainPipeline", t, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        // A missing local CSV before Spark starts.
        final int checked = Cli.guard("TrainPipeline", out, err, t.verbose, () -> {
            if (t.csv != null) {
                Inputs.requireReadable("--csv", t.csv);
            }
            Inputs.requireWritableDirectory("--output", t.output);
            return Cli.PROCEED;
        });
        if (checked != Cli.PROCEED) {
            return checked;
        }
        return Cli.inSpark("TrainPipeline", spark, out, err, t.verbose, session -> {
            final Outcome o = t.train(session, out);
            if (o.differing() != 0) {
                err.println("TrainPipeline: the loaded PipelineModel predicted differently on " + o.differing() + " of "
                        + o.rows() + " test rows");
                return Cli.EXIT_FAILED;
            }
            return 0;
        });
    }

    /** Reads the table, fits, saves, loads back and evaluates both models. */
    Outcome train(final SparkSession spark, final PrintStream out) throws IOException {
        final Dataset<Row> table = read(spark);
        final Dataset<Row>[] split = table.randomSplit(new double[] {1 - testFraction, testFraction}, seed);
        final Dataset<Row> train = split[0].cache();
        final Dataset<Row> test = split[1].cache();
        out.printf(
                Locale.ROOT,
                "input: %s, %d rows (%d training, %d test, seed %d); features: %s%n",
                csv == null ? "churn.csv (shipped, synthetic)" : csv,
                table.count(),
                train.count(),
                test.count(),
                seed,
                hashing
                        ? "FeatureHasher of every input column (" + hashFeatures + " features)"
                        : "one-hot " + String.join(", ", CATEGORICAL) + " + " + String.join(", ", NUMERIC));

        final Pipeline pipeline = new Pipeline().setStages(stages());
        out.println("stages: "
                + String.join(
                        " -> ",
                        Arrays.stream(pipeline.getStages())
                                .map(s -> s.getClass().getSimpleName())
                                .toList()));
        final long t0 = System.nanoTime();
        final PipelineModel fitted = pipeline.fit(train);
        final double seconds = (System.nanoTime() - t0) / 1e9;
        final Path saved = output.resolve("pipeline-model");
        fitted.write().overwrite().save(saved.toString());
        final PipelineModel loaded = PipelineModel.load(saved.toString());

        // Row by row, in customer order: prediction and probability vector, bit for bit.
        final List<Row> a = fitted.transform(test)
                .select("customer", "prediction", "probability")
                .orderBy("customer")
                .collectAsList();
        final List<Row> b = loaded.transform(test)
                .select("customer", "prediction", "probability")
                .orderBy("customer")
                .collectAsList();
        final long rows = a.size();
        long differing = Math.abs(a.size() - b.size());
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            differing += a.get(i).equals(b.get(i)) ? 0 : 1;
        }
        final double[] mf = metrics(fitted, test);
        final double[] ml = metrics(loaded, test);
        train.unpersist();

        out.println();
        out.printf(Locale.ROOT, "%-24s  %8s  %13s%n", "model", "test AUC", "test accuracy");
        out.printf(
                Locale.ROOT,
                "%-24s  %8.4f  %13.4f%n",
                "fitted (" + String.format(Locale.ROOT, "%.1f s", seconds) + ")",
                mf[0],
                mf[1]);
        out.printf(Locale.ROOT, "%-24s  %8.4f  %13.4f%n", "loaded (PipelineModel)", ml[0], ml[1]);
        out.println();
        out.printf("predictions: %s on %d test rows%n", differing == 0 ? "identical" : differing + " DIFFER", rows);
        out.println("pipeline model: " + saved + "  (PipelineModel.load)");
        return new Outcome(fitted, loaded, saved, test, mf[0], mf[1], ml[0], ml[1], rows, differing);
    }

    private PipelineStage[] stages() {
        final StringIndexer label = new StringIndexer()
                .setInputCol("churned")
                .setOutputCol("label")
                .setStringOrderType("alphabetAsc"); // no = 0, yes = 1
        final SwitchMLLogisticRegression lr = new SwitchMLLogisticRegression().setPrecision(precision);
        lr.setMaxIter(fit.maxIter).setRegParam(fit.regParam);
        if (hashing) {
            final String[] inputs = concat(CATEGORICAL, NUMERIC);
            final FeatureHasher hasher = new FeatureHasher()
                    .setInputCols(inputs)
                    .setOutputCol("features")
                    .setNumFeatures(hashFeatures);
            return new PipelineStage[] {label, hasher, lr};
        }
        final String[] indexed =
                Arrays.stream(CATEGORICAL).map(c -> c + "_index").toArray(String[]::new);
        final String[] encoded =
                Arrays.stream(CATEGORICAL).map(c -> c + "_onehot").toArray(String[]::new);
        final StringIndexer indexer = new StringIndexer()
                .setInputCols(CATEGORICAL)
                .setOutputCols(indexed)
                .setHandleInvalid("keep");
        final OneHotEncoder onehot = new OneHotEncoder().setInputCols(indexed).setOutputCols(encoded);
        final VectorAssembler assembler =
                new VectorAssembler().setInputCols(concat(NUMERIC, encoded)).setOutputCol("features");
        return new PipelineStage[] {label, indexer, onehot, assembler, lr};
    }

    private static String[] concat(final String[] a, final String[] b) {
        final String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** {AUC, accuracy} of {@code model} on {@code test}. */
    private static double[] metrics(final PipelineModel model, final Dataset<Row> test) {
        final Dataset<Row> p = model.transform(test);
        return new double[] {
            new BinaryClassificationEvaluator().setMetricName("areaUnderROC").evaluate(p),
            new MulticlassClassificationEvaluator().setMetricName("accuracy").evaluate(p)
        };
    }

    /**
     * The table, every field read as text, then checked (a column missing, an empty field, a number that is not
     * one is one line naming the file and the record) and the numeric columns made numbers.
     */
    private Dataset<Row> read(final SparkSession spark) throws IOException {
        Dataset<Row> table;
        if (csv != null) {
            table = spark.read().option("header", true).csv(csv);
            Inputs.checkCsv(table, "--csv", csv, COLUMNS, Arrays.asList(NUMERIC));
        } else {
            final List<String> lines;
            try (InputStream in = TrainPipeline.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IOException(RESOURCE + " is not on the class path");
                }
                lines = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                        .lines()
                        .toList();
            }
            table = spark.read().option("header", true).csv(spark.createDataset(lines, Encoders.STRING()));
        }
        for (final String c : NUMERIC) {
            table = table.withColumn(c, functions.col(c).cast("double"));
        }
        return table;
    }
}

package org.switchml.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.classification.LinearSVC;
import org.apache.spark.ml.classification.LinearSVCModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.Evaluator;
import org.apache.spark.ml.evaluation.RegressionEvaluator;
import org.apache.spark.ml.feature.LabeledPoint;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.ml.regression.LinearRegressionModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.switchml.spark.ml.classification.SwitchMLLinearSVC;
import org.switchml.spark.ml.linear.FitReport;
import org.switchml.spark.ml.regression.SwitchMLLinearRegression;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Trains {@link SwitchMLLinearSVC} or {@link SwitchMLLinearRegression} on a LIBSVM file or on generated data and,
 * with {@code --compare}, its stock MLlib twin ({@code LinearSVC}, {@code LinearRegression} with solver l-bfgs) on the
 * same cached rows with the same params; prints a table: fit time, iterations, final objective, the test metric
 * (AUC for the SVM, RMSE for the regression), and what went through the switch.
 *
 * <pre>
 * bin/switchml-submit --master 'local-cluster[2,2,2048]' --class org.switchml.examples.TrainLinearModels \
 *     examples/target/examples.jar --model svc --compare
 * </pre>
 */
@Command(
        name = "TrainLinearModels",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        version = "TrainLinearModels",
        description = {
            "Fits SwitchMLLinearSVC (--model svc) or SwitchMLLinearRegression (--model linear) and, with",
            "--compare, stock MLlib LinearSVC or LinearRegression (solver l-bfgs) on the same data and params;",
            "evaluates on a held-out test set. Input: --libsvm, else seeded generated data. For the SVM, LIBSVM",
            "labels other than 0 and 1 are read as 1 when positive, else 0. Run it through bin/switchml-submit."
        },
        footer = {"", "Exit codes: 0 ok, 1 the run failed (e.g. unreadable input), 2 bad flags."})
public final class TrainLinearModels {
    @CommandLine.Spec
    CommandSpec spec;

    @Option(
            names = "--model",
            paramLabel = "M",
            defaultValue = "svc",
            description = "svc or linear (default ${DEFAULT-VALUE})")
    String model;

    @Option(
            names = "--libsvm",
            paramLabel = "PATH",
            description = "LIBSVM text file or directory (any path Spark reads)")
    String libsvm;

    @Option(names = "--compare", description = "also fit the stock MLlib estimator on the same data and params")
    boolean compare;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    @Option(
            names = "--seed",
            paramLabel = "S",
            defaultValue = "1",
            description = "seed of the split and generated data (default ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    final FitOptions fit = new FitOptions(100, 0.01);

    @Mixin
    final DataOptions data = new DataOptions(100);

    int rows = 20_000;
    double elasticNetParam;

    @Option(names = "--rows", paramLabel = "N", description = "generated: rows (default 20000)")
    void rows(final int v) {
        rows = Cli.atLeast(spec, "--rows", v, 10);
    }

    @Option(
            names = "--elastic-net-param",
            paramLabel = "A",
            description = "linear: elasticNetParam in [0, 1] (default 0)")
    void elasticNetParam(final double v) {
        elasticNetParam = Cli.closedUnitInterval(spec, "--elastic-net-param", v);
    }

    /** One fit's line of the table. */
    record Row2(String name, double seconds, int iterations, double objective, double metric, String switched) {}

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, null, System.out, System.err));
    }

    /** Parses, runs in {@code spark} (or a session of its own), returns the exit code. */
    static int run(final String[] args, final SparkSession spark, final PrintStream out, final PrintStream err) {
        final TrainLinearModels t = new TrainLinearModels();
        final int parsed = Cli.parse("TrainLinearModels", t, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        if (!t.model.equals("svc") && !t.model.equals("linear")) {
            err.println("TrainLinearModels: --model must be svc or linear, got '" + t.model + "'");
            err.println("Try --help.");
            return Cli.EXIT_USAGE;
        }
        return Cli.inSpark("TrainLinearModels", spark, out, err, t.verbose, session -> {
            t.train(session, out);
            return 0;
        });
    }

    /** Fits ours (and stock with --compare) and prints the table; returns its lines. */
    List<Row2> train(final SparkSession spark, final PrintStream out) {
        final boolean svc = model.equals("svc");
        final Dataset<Row> all = read(spark, svc).repartition(data.partitions).cache();
        final Dataset<Row>[] split = all.randomSplit(new double[] {0.8, 0.2}, seed);
        final Dataset<Row> train = split[0].cache();
        final Dataset<Row> test = split[1].cache();
        out.printf(
                Locale.ROOT,
                "input: %s, %d training rows, %d test rows, %d partitions%n",
                libsvm == null ? "generated (seed " + seed + ")" : libsvm,
                train.count(),
                test.count(),
                data.partitions);
        final List<Row2> table = new ArrayList<>();
        if (svc) {
            final SwitchMLLinearSVC ours = new SwitchMLLinearSVC();
            ours.setMaxIter(fit.maxIter).setRegParam(fit.regParam);
            table.add(fit("switchml SwitchMLLinearSVC", () -> ours.fit(train), test, ours::lastFit));
            if (compare) {
                final LinearSVC stock = new LinearSVC().setMaxIter(fit.maxIter).setRegParam(fit.regParam);
                table.add(fit("mllib LinearSVC", () -> stock.fit(train), test, () -> null));
            }
        } else {
            final SwitchMLLinearRegression ours = new SwitchMLLinearRegression();
            ours.setSolver("l-bfgs")
                    .setMaxIter(fit.maxIter)
                    .setRegParam(fit.regParam)
                    .setElasticNetParam(elasticNetParam);
            table.add(fit("switchml SwitchMLLinearRegression", () -> ours.fit(train), test, ours::lastFit));
            if (compare) {
                final LinearRegression stock = new LinearRegression()
                        .setSolver("l-bfgs")
                        .setMaxIter(fit.maxIter)
                        .setRegParam(fit.regParam)
                        .setElasticNetParam(elasticNetParam);
                table.add(fit("mllib LinearRegression", () -> stock.fit(train), test, () -> null));
            }
        }
        out.println();
        out.printf(
                Locale.ROOT,
                "%-34s %9s %10s %16s %10s  %s%n",
                "trainer",
                "fit (s)",
                "iterations",
                "final objective",
                svc ? "test AUC" : "test RMSE",
                "through the switch");
        for (final Row2 r : table) {
            out.printf(
                    Locale.ROOT,
                    "%-34s %9.2f %10d %16.10g %10.5f  %s%n",
                    r.name(),
                    r.seconds(),
                    r.iterations(),
                    r.objective(),
                    r.metric(),
                    r.switched());
        }
        return table;
    }

    private static Row2 fit(
            final String name,
            final Supplier<Model<?>> fit,
            final Dataset<Row> test,
            final Supplier<FitReport> report) {
        final long t0 = System.nanoTime();
        final Model<?> m = fit.get();
        final double seconds = (System.nanoTime() - t0) / 1e9;
        final double[] history;
        final Evaluator evaluator;
        if (m instanceof LinearSVCModel s) {
            history = s.summary().objectiveHistory();
            evaluator = new BinaryClassificationEvaluator();
        } else {
            history = ((LinearRegressionModel) m).summary().objectiveHistory();
            evaluator = new RegressionEvaluator().setMetricName("rmse");
        }
        final FitReport r = report.get();
        return new Row2(
                name,
                seconds,
                history.length - 1,
                history[history.length - 1],
                evaluator.evaluate(m.transform(test)),
                r == null
                        ? "-"
                        : (r.viaSwitch() ? "yes" : "no: " + r.reason())
                                + String.format(
                                        Locale.ROOT,
                                        ", %.3g MB per worker",
                                        r.traffic().megabytes()));
    }

    private Dataset<Row> read(final SparkSession spark, final boolean svc) {
        if (libsvm != null) {
            final Dataset<Row> d = spark.read().format("libsvm").load(libsvm);
            return svc
                    ? d.withColumn(
                            "label",
                            functions.when(functions.col("label").gt(0), 1.0).otherwise(0.0))
                    : d;
        }
        final int features = data.features;
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] w = new double[features];
        for (int j = 0; j < features; j++) {
            w[j] = rnd.nextGaussian();
        }
        final List<LabeledPoint> points = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++) {
            final double[] x = new double[features];
            double margin = 0.5;
            for (int j = 0; j < features; j++) {
                x[j] = rnd.nextGaussian() * (1 + j % 5);
                margin += w[j] * x[j] / (1 + j % 5);
            }
            final double label = svc ? (margin + rnd.nextGaussian() > 0 ? 1.0 : 0.0) : margin + rnd.nextGaussian();
            points.add(new LabeledPoint(label, Vectors.dense(x)));
        }
        return spark.createDataFrame(points, LabeledPoint.class);
    }
}

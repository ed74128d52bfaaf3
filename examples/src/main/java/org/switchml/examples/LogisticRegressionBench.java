package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.switchml.examples.data.FashionMnist;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import org.switchml.spark.ml.linear.FitReport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Stock MLlib {@code LogisticRegression} against the drop-in {@link SwitchMLLogisticRegression}, measured
 * in one run on the same cached input with the same params: the fit's wall time, iterations, final loss
 * (both must reach the same one) and, for Fashion-MNIST, test accuracy; then the ratios against each
 * case's target. Three cases:
 * <ul>
 *   <li>{@code comm} (communication-bound): generated sparse multinomial data, 2^20 features x 10 classes
 *       (~10^7 coefficients), 200,000 rows of 30 non-zeros; target: at least 5.5x faster.</li>
 *   <li>{@code overhead} (overhead-bound): a seeded 5,000-row sample of Fashion-MNIST, 10 classes
 *       (7,850 coefficients), 100 iterations; target: per-iteration time at most 1/10 of MLlib's. The
 *       per-iteration time is the marginal one, (T(100 iterations) - T(20)) / 80, on both sides, so
 *       that start-up costs (the data's first read, a barrier stage's start) are left out.</li>
 *   <li>{@code compute} (compute-bound): all 60,000 Fashion-MNIST training rows, MLlib's defaults
 *       (maxIter 100, tol 1e-6); targets: never slower, the same test accuracy (10,000 test rows).</li>
 * </ul>
 * Run it through {@code bin/switchml-submit} on {@code local-cluster[2,2,MB]} (docs/benchmarks.md has the
 * exact commands and the memory each case needs).
 */
public final class LogisticRegressionBench {
    private LogisticRegressionBench() {}

    /** Command line; -1 means the case's default. */
    record Options(
            List<String> cases,
            int rows,
            int features,
            int classes,
            int nnz,
            int maxIter,
            int partitions,
            double reg,
            String precision,
            long seed,
            Path fashionMnist,
            boolean stock,
            boolean progress,
            boolean profile,
            int repeat,
            String warmUp) {}

    /** One fit's outcome. */
    record Fit(String who, double seconds, int iterations, double loss, double accuracy, FitReport report) {}

    private static final StructType SCHEMA = new StructType(new StructField[] {
        new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())
    });

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, System.out, System.err));
    }

    /**
     * Parses the command line and runs the cases; returns the exit code. Bad flags, and Fashion-MNIST missing for a
     * case that reads it, never start Spark.
     */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        final Flags flags = new Flags();
        final int parsed = parse(args, flags, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        final Options o = flags.options();
        final int checked = Cli.guard(NAME, out, err, flags.verbose, () -> {
            checkFashionMnist(o);
            return Cli.PROCEED;
        });
        if (checked != Cli.PROCEED) {
            return checked;
        }
        final SparkConf conf = new SparkConf()
                .setAppName("switchml-lr-bench")
                .setIfMissing("spark.master", "local-cluster[2,2,6144]")
                .setIfMissing("spark.driver.maxResultSize", "4g")
                .setIfMissing("spark.switchml.slotWaitTimeout", "300s")
                .setIfMissing("spark.locality.wait", "0s");
        return Cli.inSpark(NAME, null, conf, out, err, flags.verbose, spark -> {
            if (o.progress()) {
                Configurator.setLevel("org.switchml.spark.ml", Level.INFO);
            }
            if (o.profile()) {
                // The stage launcher logs each stage's profile at TRACE.
                Configurator.setLevel("org.switchml.spark.driver.StageLauncher", Level.TRACE);
            }
            run(spark, o, out);
            return 0;
        });
    }

    /** The overhead and compute cases read Fashion-MNIST: its files must be in --fashion-mnist's directory. */
    static void checkFashionMnist(final Options o) {
        if (!o.cases().contains("overhead") && !o.cases().contains("compute")) {
            return;
        }
        for (final FashionMnist.Split split : FashionMnist.Split.values()) {
            if (!FashionMnist.available(o.fashionMnist(), split)) {
                throw new Cli.BadInput("--fashion-mnist " + o.fashionMnist() + ": no Fashion-MNIST "
                        + split.name().toLowerCase(Locale.ROOT)
                        + " files there, which the overhead and compute cases read (apt-get "
                        + "install dataset-fashion-mnist, or --case comm)");
            }
        }
    }

    private static void run(final SparkSession spark, final Options o, final PrintStream out) throws IOException {
        final JavaSparkContext jsc = new JavaSparkContext(spark.sparkContext());
        out.printf(
                "master=%s executors' memory=%s driver cores=%d precision=%s partitions=%d%n",
                jsc.master(),
                jsc.getConf().get("spark.executor.memory", "1g"),
                Runtime.getRuntime().availableProcessors(),
                o.precision(),
                o.partitions());
        warmUp(spark, o, out);
        final List<String> summary = new ArrayList<>();
        for (final String c : o.cases()) {
            switch (c) {
                case "comm" -> summary.add(communication(spark, o, out));
                case "overhead" -> summary.add(overhead(spark, o, out));
                case "compute" -> summary.add(compute(spark, o, out));
                default -> throw new IllegalStateException(c);
            }
        }
        out.println();
        out.println("summary:");
        summary.forEach(s -> out.println("  " + s));
    }

    /** Name in usage errors. */
    private static final String NAME = "LogisticRegressionBench";

    /** The command line (picocli); {@link #options()} is what the cases read. */
    @Command(
            name = NAME,
            sortOptions = false,
            description = {
                "Stock MLlib LogisticRegression against SwitchMLLogisticRegression, same data and params, in one run.",
                "The master and memory come from spark-submit (bin/switchml-submit); see docs/benchmarks.md.",
                ""
            },
            footer = {
                "",
                "Exit codes: 0 ok, 1 the run failed, 2 bad flags or Fashion-MNIST missing for a case that "
                        + "reads it."
            })
    static final class Flags implements Cli.Validated {
        @Spec
        CommandSpec spec;

        private List<String> cases = List.of("comm", "overhead", "compute");
        private int rows = -1;
        private int features = 1 << 20;
        private int classes = 10;
        private int nnz = 30;
        private int maxIter = -1;
        private int partitions = 16;
        private double reg = -1;
        private String precision = "fp64";
        private long seed = 8;
        private int repeat = 1;
        private String warmUp = "auto";

        @Option(
                names = "--fashion-mnist",
                paramLabel = "DIR",
                order = 13,
                description = "directory of the IDX files (default: the dataset-fashion-mnist package's)")
        private Path fashionMnist = FashionMnist.defaultDirectory();

        @Option(names = "--no-stock", order = 16, description = "skip stock MLlib (switchml only)")
        private boolean noStock;

        @Option(names = "--progress", order = 17, description = "log every iteration of the switchml fits")
        private boolean progress;

        @Option(
                names = "--profile",
                order = 18,
                description = "log where each switch stage's time goes (rendezvous, compute, switch)")
        private boolean profile;

        @Option(
                names = "--verbose",
                order = 19,
                description = "on failure, the whole stack trace after the one-line " + "message")
        private boolean verbose;

        @Option(
                names = {"-h", "--help"},
                usageHelp = true,
                order = 20,
                description = "this text")
        private boolean help;

        @Option(
                names = "--case",
                paramLabel = "CASE",
                order = 1,
                description = {
                    "comm (sparse, ~10^7 coefficients), "
                            + "overhead (Fashion-MNIST 5k, 100 iterations), compute (Fashion-MNIST 60k), or all (default: all, in that "
                            + "order)"
                })
        void cases(final String v) {
            cases = switch (v) {
                case "comm", "overhead", "compute" -> List.of(v);
                case "all" -> List.of("comm", "overhead", "compute");
                default -> throw Cli.usage(spec, "--case '" + v + "' must be comm, overhead, compute or all");
            };
        }

        @Option(
                names = "--rows",
                paramLabel = "N",
                order = 2,
                description = "rows (comm: 200000; overhead: 5000; compute: 60000, the whole training set)")
        void rows(final String v) {
            rows = whole("--rows", v, 1);
        }

        @Option(
                names = "--features",
                paramLabel = "N",
                order = 3,
                description = "comm: features (default 1048576 = 2^20)")
        void features(final String v) {
            features = whole("--features", v, 1);
        }

        @Option(names = "--classes", paramLabel = "K", order = 4, description = "comm: classes (default 10)")
        void classes(final String v) {
            classes = whole("--classes", v, 3);
        }

        @Option(names = "--nnz", paramLabel = "N", order = 5, description = "comm: non-zeros per row (default 30)")
        void nnz(final String v) {
            nnz = whole("--nnz", v, 1);
        }

        @Option(
                names = "--max-iter",
                paramLabel = "N",
                order = 6,
                description = "iterations (comm: 10 with tol 0; "
                        + "overhead: 100 and 20 with tol 0; compute: 100 with MLlib's tol 1e-6)")
        void maxIter(final String v) {
            maxIter = whole("--max-iter", v, 1);
        }

        @Option(
                names = "--partitions",
                paramLabel = "P",
                order = 7,
                description = "partitions of the cached input (default 16)")
        void partitions(final String v) {
            partitions = whole("--partitions", v, 1);
        }

        @Option(
                names = {"--reg-param", "--reg"},
                paramLabel = "R",
                order = 8,
                description = "regParam (default: comm 1e-4, others 0)")
        void reg(final String v) {
            try {
                reg = Double.parseDouble(v);
            } catch (final NumberFormatException e) {
                throw Cli.usage(spec, "--reg-param '" + v + "' is not a number");
            }
            if (!(reg >= 0)) {
                throw Cli.usage(spec, "--reg-param " + v + " must be >= 0");
            }
        }

        @Option(
                names = "--precision",
                paramLabel = "P",
                order = 9,
                description = "precision of the fit's sums through the switch: fp64 (default) or fp32")
        void precision(final String v) {
            if (!v.equals("fp64") && !v.equals("fp32")) {
                throw Cli.usage(spec, "--precision '" + v + "' must be fp64 or fp32");
            }
            precision = v;
        }

        @Option(names = "--seed", paramLabel = "S", order = 10, description = "data seed (default 8)")
        void seed(final String v) {
            seed = whole("--seed", v, 0);
        }

        @Option(
                names = "--reps",
                paramLabel = "N",
                order = 11,
                description = "overhead: fits per estimator and "
                        + "maxIter, interleaved; medians are compared (default 1; --repeat N also works)")
        void repeat(final String v) {
            repeat = whole("--reps", v, 1);
        }

        /** The earlier name of {@code --reps}. */
        @Option(names = "--repeat", paramLabel = "N", hidden = true)
        void repeatAlias(final String v) {
            repeat = whole("--repeat", v, 1);
        }

        @Option(
                names = "--warm-up",
                paramLabel = "W",
                order = 12,
                description = "the JIT warm-up fit before the cases: "
                        + "large (2^18 features x 10 classes), small (4096 x 5), none (the first fit is the application's "
                        + "first), or auto (default: large before the comm case, else small)")
        void warmUp(final String v) {
            if (!List.of("auto", "large", "small", "none").contains(v)) {
                throw Cli.usage(spec, "--warm-up '" + v + "' must be auto, large, small or none");
            }
            warmUp = v;
        }

        private int whole(final String option, final String v, final int min) {
            final int x;
            try {
                x = Integer.parseInt(v.trim());
            } catch (final NumberFormatException e) {
                throw Cli.usage(spec, option + " '" + v + "' is not a whole number");
            }
            if (x < min) {
                throw Cli.usage(spec, option + " " + x + " must be >= " + min);
            }
            return x;
        }

        @Override
        public void validate(final CommandLine cl) {
            if (nnz > features) {
                throw Cli.usage(cl, "--nnz " + nnz + " exceeds --features " + features);
            }
        }

        Options options() {
            return new Options(
                    cases,
                    rows,
                    features,
                    classes,
                    nnz,
                    maxIter,
                    partitions,
                    reg,
                    precision,
                    seed,
                    fashionMnist,
                    !noStock,
                    progress,
                    profile,
                    repeat,
                    warmUp);
        }
    }

    /**
     * Parses the command line into {@code flags}; returns {@link Cli#PROCEED} to run, else the exit code
     * (0 after --help, 2 after a usage error, printed to {@code err}).
     */
    static int parse(final String[] args, final Flags flags, final PrintStream out, final PrintStream err) {
        return Cli.parse(NAME, flags, args, out, err);
    }

    /** The options of a good command line ({@code --help} is not handled here); a bad one raises picocli's error. */
    static Options parse(final String[] args) {
        final Flags flags = new Flags();
        final CommandLine cl = new CommandLine(flags);
        cl.parseArgs(args);
        flags.validate(cl);
        return flags.options();
    }

    // ------------------------------------------------------------------------------------ the cases

    private static String communication(final SparkSession spark, final Options o, final PrintStream out) {
        final int rows = o.rows() > 0 ? o.rows() : 200_000;
        final int maxIter = o.maxIter() > 0 ? o.maxIter() : 10;
        final double reg = o.reg() >= 0 ? o.reg() : 1e-4;
        final long t0 = System.nanoTime();
        final Dataset<Row> data = sparse(spark, rows, o.features(), o.classes(), o.nnz(), o.partitions(), o.seed());
        out.printf(
                "%n[comm] %d rows x %d features, %d classes (%,d coefficients), %d non-zeros per row, %d partitions,"
                        + " cached in %.1f s; multinomial, regParam %g, maxIter %d, tol 0%n",
                rows,
                o.features(),
                o.classes(),
                (long) o.classes() * (o.features() + 1),
                o.nnz(),
                o.partitions(),
                seconds(t0),
                reg,
                maxIter);
        final Consumer<LogisticRegression> params = lr ->
                lr.setFamily("multinomial").setRegParam(reg).setMaxIter(maxIter).setTol(0.0);
        final Fit ours = fit(out, "comm", "switchml", switchml(o), params, data, null);
        final Fit stock =
                o.stock() ? fit(out, "comm", "stock MLlib", new LogisticRegression(), params, data, null) : null;
        data.unpersist();
        if (stock == null) {
            return String.format("comm: switchml %.1f s (stock MLlib not run)", ours.seconds());
        }
        sameLoss(out, "comm", stock, ours);
        final double speedup = stock.seconds() / ours.seconds();
        final boolean target = rows >= 200_000 && o.features() == 1 << 20 && o.classes() == 10 && o.nnz() == 30;
        return String.format(
                "comm (sparse, %,d coefficients): stock %.1f s, switchml %.1f s -> %.2fx faster "
                        + "(target >= 5.5x: %s); final loss rel diff %.1e",
                (long) o.classes() * (o.features() + 1),
                stock.seconds(),
                ours.seconds(),
                speedup,
                !target ? "not the target's size" : speedup >= 5.5 ? "met" : "MISSED",
                relDiff(ours, stock));
    }

    private static String overhead(final SparkSession spark, final Options o, final PrintStream out)
            throws IOException {
        final int rows = o.rows() > 0 ? o.rows() : 5_000;
        final int many = o.maxIter() > 0 ? o.maxIter() : 100;
        final int few = Math.max(1, many / 5);
        final FashionMnist train = FashionMnist.load(o.fashionMnist(), FashionMnist.Split.TRAIN);
        final long t0 = System.nanoTime();
        final Dataset<Row> data = fashionMnist(spark, train, train.sample(rows, o.seed()), o.partitions());
        out.printf(
                "%n[overhead] Fashion-MNIST sample of %d rows, 784 features, 10 classes (7,850 coefficients), %d "
                        + "partitions, cached in %.1f s; maxIter %d and %d, tol 0%n",
                rows, o.partitions(), seconds(t0), many, few);
        final double reg = Math.max(0, o.reg());
        final Fit[] ours = new Fit[2];
        final Fit[] stock = new Fit[2];
        final int[] iters = {many, few};
        final List<List<Fit>> oursAll = List.of(new ArrayList<>(), new ArrayList<>());
        final List<List<Fit>> stockAll = List.of(new ArrayList<>(), new ArrayList<>());
        for (int r = 0; r < o.repeat(); r++) {
            for (int i = 0; i < 2; i++) {
                final int maxIter = iters[i];
                final Consumer<LogisticRegression> params =
                        lr -> lr.setRegParam(reg).setMaxIter(maxIter).setTol(0.0);
                oursAll.get(i).add(fit(out, "overhead", "switchml", switchml(o), params, data, null));
                if (o.stock()) {
                    stockAll.get(i)
                            .add(fit(out, "overhead", "stock MLlib", new LogisticRegression(), params, data, null));
                }
            }
        }
        for (int i = 0; i < 2; i++) {
            ours[i] = median(oursAll.get(i));
            stock[i] = o.stock() ? median(stockAll.get(i)) : null;
        }
        if (o.repeat() > 1) {
            out.printf(
                    "[overhead] medians of %d fits each: switchml %.2f s (%d iterations), %.2f s (%d)%s%n",
                    o.repeat(),
                    ours[0].seconds(),
                    many,
                    ours[1].seconds(),
                    few,
                    o.stock()
                            ? String.format(
                                    Locale.ROOT, "; stock MLlib %.2f s, %.2f s", stock[0].seconds(), stock[1].seconds())
                            : "");
        }
        data.unpersist();
        final double oursPer = marginal(ours);
        out.printf(
                "[overhead] switchml: %.1f ms per iteration (marginal, %d vs %d iterations); whole fit %.1f ms "
                        + "per iteration; inside the loop %.1f ms per evaluation (steady, the FitReport's)%n",
                oursPer * 1e3,
                ours[0].iterations(),
                ours[1].iterations(),
                ours[0].seconds() / ours[0].iterations() * 1e3,
                ours[0].report() == null
                        ? Double.NaN
                        : ours[0].report().timing().msPerEvaluation());
        if (!o.stock()) {
            return String.format("overhead: switchml %.1f ms per iteration (stock MLlib not run)", oursPer * 1e3);
        }
        sameLoss(out, "overhead", stock[0], ours[0]);
        final double stockPer = marginal(stock);
        out.printf(
                "[overhead] stock MLlib: %.1f ms per iteration (marginal); whole fit %.1f ms per iteration%n",
                stockPer * 1e3, stock[0].seconds() / stock[0].iterations() * 1e3);
        final double ratio = oursPer / stockPer;
        return String.format(
                "overhead (Fashion-MNIST %d rows, %d iterations): per iteration stock %.1f ms, switchml "
                        + "%.1f ms -> 1/%.1f (target <= 1/10: %s); whole fits %.1f s vs %.1f s (%.2fx)",
                rows,
                many,
                stockPer * 1e3,
                oursPer * 1e3,
                1 / ratio,
                rows != 5_000 || many != 100 ? "not the target's size" : ratio <= 0.1 ? "met" : "MISSED",
                stock[0].seconds(),
                ours[0].seconds(),
                stock[0].seconds() / ours[0].seconds());
    }

    /** The fit of median wall time (the upper one of an even count). */
    private static Fit median(final List<Fit> fits) {
        final List<Fit> sorted = new ArrayList<>(fits);
        sorted.sort(Comparator.comparingDouble(Fit::seconds));
        return sorted.get(sorted.size() / 2);
    }

    private static double marginal(final Fit[] f) {
        return (f[0].seconds() - f[1].seconds()) / (f[0].iterations() - f[1].iterations());
    }

    private static String compute(final SparkSession spark, final Options o, final PrintStream out) throws IOException {
        final FashionMnist train = FashionMnist.load(o.fashionMnist(), FashionMnist.Split.TRAIN);
        final FashionMnist test = FashionMnist.load(o.fashionMnist(), FashionMnist.Split.TEST);
        final int rows = o.rows() > 0 ? Math.min(o.rows(), train.size()) : train.size();
        final int maxIter = o.maxIter() > 0 ? o.maxIter() : 100;
        final long t0 = System.nanoTime();
        final Dataset<Row> data = fashionMnist(spark, train, train.sample(rows, o.seed()), o.partitions());
        final Dataset<Row> testData = fashionMnist(spark, test, test.sample(test.size(), o.seed()), o.partitions());
        out.printf(
                "%n[compute] Fashion-MNIST %d training rows (%d test rows), 784 features, 10 classes, %d partitions, "
                        + "cached in %.1f s; maxIter %d, tol 1e-6%n",
                rows, test.size(), o.partitions(), seconds(t0), maxIter);
        final double reg = Math.max(0, o.reg());
        final Consumer<LogisticRegression> params = lr -> lr.setRegParam(reg).setMaxIter(maxIter);
        final Fit ours = fit(out, "compute", "switchml", switchml(o), params, data, testData);
        final Fit stock =
                o.stock() ? fit(out, "compute", "stock MLlib", new LogisticRegression(), params, data, testData) : null;
        data.unpersist();
        testData.unpersist();
        if (stock == null) {
            return String.format(
                    "compute: switchml %.1f s, test accuracy %.4f (stock MLlib not run)",
                    ours.seconds(), ours.accuracy());
        }
        sameLoss(out, "compute", stock, ours);
        final double speedup = stock.seconds() / ours.seconds();
        final boolean sameAccuracy = Math.abs(ours.accuracy() - stock.accuracy()) <= 0.001;
        return String.format(
                "compute (Fashion-MNIST %d rows): stock %.1f s, switchml %.1f s -> %.2fx (target: never "
                        + "slower: %s); test accuracy %.4f vs %.4f (same within 0.1%%: %s)",
                rows,
                stock.seconds(),
                ours.seconds(),
                speedup,
                rows != train.size() ? "not the target's size" : speedup >= 1 ? "met" : "MISSED",
                stock.accuracy(),
                ours.accuracy(),
                sameAccuracy ? "met" : "MISSED");
    }

    // ------------------------------------------------------------------------------------ fits

    private static SwitchMLLogisticRegression switchml(final Options o) {
        return new SwitchMLLogisticRegression().setPrecision(o.precision());
    }

    private static Fit fit(
            final PrintStream out,
            final String tag,
            final String who,
            final LogisticRegression lr,
            final Consumer<LogisticRegression> params,
            final Dataset<Row> data,
            final Dataset<Row> test) {
        params.accept(lr);
        System.gc(); // outside the timed span: the previous fit's garbage is not this one's
        final long t0 = System.nanoTime();
        final LogisticRegressionModel m = lr.fit(data);
        final double s = seconds(t0);
        final double[] h = m.summary().objectiveHistory();
        final double accuracy = test == null ? Double.NaN : accuracy(m, test);
        final FitReport report = lr instanceof SwitchMLLogisticRegression x ? x.lastFit() : null;
        out.printf(
                Locale.ROOT,
                "[%s] %-11s %8.2f s, %3d iterations, final loss %.12g%s%n",
                tag,
                who,
                s,
                m.summary().totalIterations(),
                h[h.length - 1],
                Double.isNaN(accuracy) ? "" : String.format(Locale.ROOT, ", test accuracy %.4f", accuracy));
        if (report != null) {
            out.printf("[%s]             %s%n", tag, report);
        }
        return new Fit(who, s, m.summary().totalIterations(), h[h.length - 1], accuracy, report);
    }

    private static double accuracy(final LogisticRegressionModel m, final Dataset<Row> test) {
        final Dataset<Row> p = m.transform(test);
        final long right = p.filter(functions.col("prediction").equalTo(functions.col("label")))
                .count();
        return (double) right / test.count();
    }

    private static void sameLoss(final PrintStream out, final String tag, final Fit stock, final Fit ours) {
        out.printf(
                "[%s] final loss: switchml %.12g, stock %.12g (rel diff %+.1e); iterations %d vs %d%n",
                tag, ours.loss(), stock.loss(), relDiff(ours, stock), ours.iterations(), stock.iterations());
    }

    private static double relDiff(final Fit ours, final Fit stock) {
        return (ours.loss() - stock.loss()) / Math.abs(stock.loss());
    }

    /**
     * JIT warm-up of driver and executors: a 10-iteration fit with each estimator on sparse rows. Before the
     * communication-bound case the model has 2^18 x 10 coefficients, so that each allreduce is about 1,300
     * packets per worker: the per-packet code of the workers and the switch is compiled only after some
     * 10^4 packets, and a small warm-up (20,000 coefficients, 10 packets per allreduce) left the comm fit's
     * first allreduces running at a quarter of their later rate.
     */
    private static void warmUp(final SparkSession spark, final Options o, final PrintStream out) {
        if (o.warmUp().equals("none")) {
            out.println("warm-up: none (each estimator's first fit is its first in this application)");
            return;
        }
        final long t0 = System.nanoTime();
        final boolean large = o.warmUp().equals("large")
                || (o.warmUp().equals("auto") && o.cases().contains("comm"));
        final Dataset<Row> warm = large
                ? sparse(spark, 20_000, 1 << 18, 10, 20, o.partitions(), o.seed() + 1)
                : sparse(spark, 4_000, 4_096, 5, 20, o.partitions(), o.seed() + 1);
        final double data = seconds(t0);
        final double[] took = new double[2];
        int i = 0;
        for (final LogisticRegression lr : new LogisticRegression[] {switchml(o), new LogisticRegression()}) {
            final long t1 = System.nanoTime();
            lr.setMaxIter(10).fit(warm);
            took[i++] = seconds(t1);
        }
        warm.unpersist();
        out.printf(
                "warm-up (%s): data %.1f s, a 10-iteration fit with switchml %.1f s, with stock MLlib %.1f s%n",
                large ? "2^18 features x 10 classes" : "4096 features x 5 classes", data, took[0], took[1]);
    }

    private static double seconds(final long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    // ------------------------------------------------------------------------------------ data

    /**
     * Seeded sparse multinomial data, generated on the executors: each row has {@code nnz} distinct
     * features, uniform over {@code features}, of value 1 (hashed tokens); each feature leans towards
     * one class with a random strength, and the label is drawn from the softmax of the row's leanings.
     */
    static Dataset<Row> sparse(
            final SparkSession spark,
            final int rows,
            final int features,
            final int classes,
            final int nnz,
            final int partitions,
            final long seed) {
        final JavaRDD<Row> rdd = new JavaSparkContext(spark.sparkContext())
                .parallelize(ranges(rows, partitions), partitions)
                .flatMap(range -> {
                    final List<Row> out = new ArrayList<>(range[1] - range[0]);
                    final double[] score = new double[classes];
                    for (int r = range[0]; r < range[1]; r++) {
                        final SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + r);
                        final int[] idx = distinct(rnd, nnz, features);
                        Arrays.fill(score, 0.0);
                        for (final int j : idx) {
                            final SplittableRandom fr = new SplittableRandom(seed ^ (0xC2B2AE3D27D4EB4FL * (j + 1L)));
                            score[fr.nextInt(classes)] += 1.5 * fr.nextGaussian();
                        }
                        final double[] values = new double[nnz];
                        Arrays.fill(values, 1.0);
                        out.add(RowFactory.create(
                                (double) softmaxDraw(rnd, score), Vectors.sparse(features, idx, values)));
                    }
                    return out.iterator();
                });
        final Dataset<Row> df = spark.createDataFrame(rdd, SCHEMA).cache();
        df.count();
        return df;
    }

    private static List<int[]> ranges(final int rows, final int parts) {
        final List<int[]> out = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            out.add(new int[] {(int) ((long) rows * p / parts), (int) ((long) rows * (p + 1) / parts)});
        }
        return out;
    }

    private static int[] distinct(final SplittableRandom rnd, final int k, final int n) {
        final TreeSet<Integer> set = new TreeSet<>();
        while (set.size() < k) {
            set.add(rnd.nextInt(n));
        }
        return set.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int softmaxDraw(final SplittableRandom rnd, final double[] score) {
        double max = Double.NEGATIVE_INFINITY;
        for (final double s : score) {
            max = Math.max(max, s);
        }
        double sum = 0;
        final double[] p = new double[score.length];
        for (int c = 0; c < p.length; c++) {
            p[c] = Math.exp(score[c] - max);
            sum += p[c];
        }
        double u = rnd.nextDouble() * sum;
        for (int c = 0; c < p.length; c++) {
            u -= p[c];
            if (u < 0) {
                return c;
            }
        }
        return p.length - 1;
    }

    /**
     * The rows {@code idx} of a Fashion-MNIST split, pixels 0..255, as a DataFrame held by the executors.
     * The rows are read on the driver and parallelized, then checkpointed locally (eagerly, in the
     * executors' block managers): a cached DataFrame over {@code parallelize} keeps the parallelized
     * partitions in its lineage, and every task of every later job would carry its partition's rows (17 MB
     * per task here), which would charge stock MLlib's job per evaluation for the benchmark's data loading.
     */
    static Dataset<Row> fashionMnist(
            final SparkSession spark, final FashionMnist set, final int[] idx, final int partitions) {
        final List<Row> rows = new ArrayList<>(idx.length);
        for (final int i : idx) {
            rows.add(RowFactory.create(
                    (double) set.label(i), Vectors.dense(set.pixels(i)).compressed()));
        }
        final JavaRDD<Row> rdd = new JavaSparkContext(spark.sparkContext()).parallelize(rows, partitions);
        final Dataset<Row> df = spark.createDataFrame(rdd, SCHEMA).localCheckpoint(true);
        df.count();
        return df;
    }
}

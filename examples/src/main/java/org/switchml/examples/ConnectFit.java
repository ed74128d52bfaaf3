package org.switchml.examples;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.spark.connect.proto.Relation;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * A stock {@code LogisticRegression} fitted through a Spark Connect server, as a PySpark user's
 * {@code pyspark.ml} code does it, with the same messages ({@link ConnectMl}): fit, the model's coefficients,
 * intercept and training summary, a transform, a save and a load back as a stock model. On a server started with
 * spark-switchml's plugin ({@code examples/bin/connect-fit} starts one), the fit trains with
 * SwitchMLLogisticRegression through the switch; the client is the same either way.
 *
 * <p>Without {@code --data} it writes a seeded synthetic LIBSVM file (a logistic model with known weights) into
 * {@code --output}; the server reads the data and writes the model there, so both must be paths the server sees
 * (the same machine, or a shared file system).
 */
@Command(
        name = "ConnectFit",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        versionProvider = Cli.Version.class,
        description = {
            "Fits a stock LogisticRegression through a Spark Connect server with the messages PySpark sends,",
            "fetches the model's attributes and summary, transforms the data, saves the model and loads it back.",
            ""
        },
        footer = {
            "",
            "Exit codes: 0 ok, 1 the run failed or the loaded model or the transform disagreed with the fitted",
            "model, 2 bad flags or a data file it cannot use."
        })
public final class ConnectFit {
    @CommandLine.Spec
    CommandSpec spec;

    @Option(
            names = "--remote",
            paramLabel = "HOST:PORT",
            defaultValue = "127.0.0.1:15002",
            description = "the Connect server (default ${DEFAULT-VALUE})")
    String remote;

    @Option(
            names = "--data",
            paramLabel = "PATH",
            description = "a LIBSVM file the server can read (default: a " + "synthetic one written into --output)")
    Path data;

    @Option(
            names = "--output",
            paramLabel = "DIR",
            defaultValue = "switchml-connect-output",
            description = "where the data (without --data) and the model (DIR/model) go (default ${DEFAULT-VALUE})")
    Path output;

    @Option(
            names = "--seed",
            paramLabel = "S",
            defaultValue = "11",
            description = "seed of the synthetic data " + "(default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    @Mixin
    final FitOptions fit = new FitOptions(30, 0.01);

    int rows = 4000;
    int features = 12;
    String host;
    int port;

    @Option(names = "--rows", paramLabel = "N", description = "rows of the synthetic data (default 4000)")
    void rows(final int v) {
        rows = Cli.atLeast(spec, "--rows", v, 10);
    }

    /** What a run saw. */
    public record Outcome(
            String modelRef,
            double[] coefficients,
            double intercept,
            double[] objectiveHistory,
            int totalIterations,
            long rows,
            long correct,
            long locallyCorrect,
            String savedClass,
            double[] loadedCoefficients) {}

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, System.out, System.err));
    }

    /** Parses {@code args}, runs, and returns the exit code. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        final ConnectFit c = new ConnectFit();
        final int parsed = Cli.parse("ConnectFit", c, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        final int colon = c.remote.lastIndexOf(':');
        try {
            c.host = c.remote.substring(0, colon);
            c.port = Integer.parseInt(c.remote.substring(colon + 1));
        } catch (final RuntimeException e) {
            err.println("ConnectFit: --remote must be HOST:PORT, got '" + c.remote + "'");
            err.println("Try --help.");
            return Cli.EXIT_USAGE;
        }
        return Cli.guard("ConnectFit", out, err, c.verbose, () -> {
            if (c.data != null) {
                Inputs.requireReadable("--data", c.data.toString());
            }
            Inputs.requireWritableDirectory("--output", c.output);
            try (ConnectMl connect = ConnectMl.connect(c.host, c.port, 600_000)) {
                final Outcome o = c.fit(connect, out);
                return o.correct() == o.locallyCorrect() && Arrays.equals(o.coefficients(), o.loadedCoefficients())
                        ? 0
                        : Cli.EXIT_FAILED;
            }
        });
    }

    /** The whole round trip in {@code connect}'s session, reported on {@code out}. */
    public Outcome fit(final ConnectMl connect, final PrintStream out) throws IOException {
        Files.createDirectories(output);
        final Path file = (data != null ? data : synthetic(output.resolve("connect-fit.libsvm"))).toAbsolutePath();
        final List<double[]> local = readLibsvm(file);
        final String plugin = connect.getConf("spark.connect.ml.backend.classes");
        out.println("ConnectFit: server " + remote + ", session " + connect.sessionId()
                + ", spark.connect.ml.backend.classes=" + (plugin == null || plugin.isEmpty() ? "(unset)" : plugin));

        // lr = LogisticRegression(maxIter=..., regParam=...); model = lr.fit(spark.read.format("libsvm").load(file))
        final String uid = "LogisticRegression_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        final Map<String, Object> params = new LinkedHashMap<>();
        params.put("maxIter", fit.maxIter);
        params.put("regParam", fit.regParam);
        final Relation dataset = connect.read("libsvm", file.toString());
        final long t0 = System.nanoTime();
        final String model = connect.fit(ConnectMl.LOGISTIC_REGRESSION, uid, params, dataset);
        out.printf(
                Locale.ROOT,
                "ConnectFit: fitted %s (%d rows) in %d ms: model %s%n",
                uid,
                local.size(),
                (System.nanoTime() - t0) / 1_000_000,
                model);

        final double[] w = ConnectMl.asDoubles(connect.fetch(model, "coefficients"));
        final double b = ConnectMl.asDouble(connect.fetch(model, "intercept"));
        final double[] history = ConnectMl.asDoubles(connect.fetch(model + ".summary", "objectiveHistory"));
        final int iterations = ConnectMl.asInt(connect.fetch(model + ".summary", "totalIterations"));
        out.printf(Locale.ROOT, "ConnectFit: coefficients %s, intercept %.6f%n", head(w), b);
        out.printf(
                Locale.ROOT,
                "ConnectFit: summary: totalIterations %d, objectiveHistory %d values, %.6f .. %.6f%n",
                iterations,
                history.length,
                history[0],
                history[history.length - 1]);

        // model.transform(df).select("label", "prediction").collect()
        final List<List<Object>> predicted = connect.collect(connect.select(
                connect.transform(model, params, connect.read("libsvm", file.toString())), "label", "prediction"));
        final long correct = predicted.stream()
                .filter(r -> ((Double) r.get(0)).equals(r.get(1)))
                .count();
        final long locallyCorrect = local.stream()
                .filter(r -> (margin(w, b, r) > 0 ? 1.0 : 0.0) == r[0])
                .count();
        out.printf(
                Locale.ROOT,
                "ConnectFit: transform: %d of %d rows predicted right (%.2f%%); from the fetched "
                        + "coefficients: %d%n",
                correct,
                predicted.size(),
                100.0 * correct / predicted.size(),
                locallyCorrect);

        // model.write().overwrite().save(dir); LogisticRegressionModel.load(dir)
        final Path saved = output.resolve("model").toAbsolutePath();
        connect.save(model, params, saved.toString(), true);
        final String savedClass = savedClass(saved);
        final ConnectMl.Loaded loaded = connect.load(ConnectMl.LOGISTIC_REGRESSION_MODEL, saved.toString());
        final double[] reloaded = ConnectMl.asDoubles(connect.fetch(loaded.ref(), "coefficients"));
        out.println("ConnectFit: saved to " + saved + " as " + savedClass + "; loaded back as " + loaded.uid()
                + (Arrays.equals(w, reloaded) ? ", the same coefficients" : ", DIFFERENT coefficients"));
        return new Outcome(
                model, w, b, history, iterations, predicted.size(), correct, locallyCorrect, savedClass, reloaded);
    }

    private static String head(final double[] w) {
        final StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < Math.min(4, w.length); i++) {
            sb.append(i > 0 ? ", " : "").append(String.format(Locale.ROOT, "%.5f", w[i]));
        }
        return sb.append(w.length > 4 ? ", ... (" + w.length + ")]" : "]").toString();
    }

    /** {@code w . x + b} of a row {@code [label, x...]}. */
    static double margin(final double[] w, final double b, final double[] row) {
        double m = b;
        for (int j = 0; j < w.length; j++) {
            m += w[j] * row[j + 1];
        }
        return m;
    }

    /** The class a saved model's metadata names (Spark ML's {@code metadata/part-00000} JSON). */
    static String savedClass(final Path dir) throws IOException {
        try (Stream<Path> parts = Files.list(dir.resolve("metadata"))) {
            for (final Path p : parts.filter(f -> f.getFileName().toString().startsWith("part-"))
                    .toList()) {
                final String json = Files.readString(p);
                final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"class\":\"([^\"]+)\"")
                        .matcher(json);
                if (m.find()) {
                    return m.group(1);
                }
            }
        }
        throw new IOException(dir + "/metadata names no class");
    }

    /** Rows of a LIBSVM file as {@code [label, x1..xd]} with {@code d} the largest index. */
    static List<double[]> readLibsvm(final Path file) throws IOException {
        final List<String> lines = Files.readAllLines(file);
        int d = 0;
        for (int i = 0; i < lines.size(); i++) {
            final String problem = Inputs.libsvmProblem(lines.get(i));
            if (problem != null) {
                throw new Cli.BadInput("--data " + file + " line " + (i + 1) + ": " + problem);
            }
            final String[] items = lines.get(i).trim().split(" ");
            if (items.length > 1 && !items[0].isEmpty() && !items[0].startsWith("#")) {
                d = Math.max(d, Integer.parseInt(items[items.length - 1].split(":")[0]));
            }
        }
        final int dim = d;
        return lines.stream()
                .map(String::trim)
                .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .map(l -> {
                    final String[] items = l.split(" ");
                    final double[] row = new double[dim + 1];
                    row[0] = Double.parseDouble(items[0]);
                    for (int k = 1; k < items.length; k++) {
                        final String[] e = items[k].split(":");
                        row[Integer.parseInt(e[0])] = Double.parseDouble(e[1]);
                    }
                    return row;
                })
                .toList();
    }

    /** A seeded logistic data set: labels drawn from known weights; written as LIBSVM. */
    Path synthetic(final Path file) throws IOException {
        final SplittableRandom r = new SplittableRandom(seed);
        final double[] truth = new double[features];
        for (int j = 0; j < features; j++) {
            truth[j] = r.nextDouble(-2, 2);
        }
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < rows; i++) {
                final StringBuilder line = new StringBuilder();
                double m = 0.3;
                final double[] x = new double[features];
                for (int j = 0; j < features; j++) {
                    x[j] = r.nextDouble() < 0.2 ? 0 : r.nextDouble(-1, 1) * (1 + j % 3);
                    m += truth[j] * x[j];
                }
                line.append(r.nextDouble() < 1 / (1 + Math.exp(-m)) ? "1" : "0");
                for (int j = 0; j < features; j++) {
                    if (x[j] != 0) {
                        line.append(' ').append(j + 1).append(':').append(x[j]);
                    }
                }
                w.write(line.append('\n').toString());
            }
        }
        return file;
    }
}

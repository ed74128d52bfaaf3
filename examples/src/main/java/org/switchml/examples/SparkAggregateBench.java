package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLAggregator;
import org.switchml.spark.SwitchMLDriver;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Spark aggregation benchmark, everything measured in one run: one aggregation through the switch
 * ({@link SwitchMLAggregator}) against treeAggregate and treeAggregate with finalAggregateOnExecutor, for
 * each vector size and partition count; then the replicated loop's per-iteration time against one
 * treeAggregate job per iteration. Prints medians and the ratios against treeAggregate.
 *
 * <p>Run it through {@code bin/switchml-submit} (docs/benchmarks.md), which puts the library on the
 * executors and enables the plugin:
 * <pre>
 * bin/switchml-submit --master 'local-cluster[2,2,3072]' --driver-memory 6g \
 *     --class org.switchml.examples.SparkAggregateBench examples/target/examples.jar
 * </pre>
 */
public final class SparkAggregateBench {
    private static boolean PROFILE;

    private SparkAggregateBench() {}

    /** Exit code of a bad command line. */
    static final int EXIT_USAGE = Cli.EXIT_USAGE;
    /** Largest vector length accepted (doubles): 2 GiB per vector. */
    static final int MAX_DIM = 1 << 28;

    /** Command line. */
    @Command(
            name = "SparkAggregateBench",
            sortOptions = false,
            description = {
                "Run it through bin/switchml-submit, which sets the master and the plugin.",
                "",
                "One aggregation through the switch (SwitchMLAggregator) against treeAggregate and treeAggregate with",
                "finalAggregateOnExecutor, per vector size and partition count; then the replicated loop's cost per",
                "iteration against one treeAggregate job per iteration. Medians of the timed calls.",
                ""
            },
            footer = {"", "Exit codes: 0 ok, 1 the run failed (one line; --verbose for the trace), 2 bad flags."})
    static final class Options {
        @Spec
        CommandSpec spec;

        private int[] sizes = {10_000, 1 << 20, 1 << 24};
        private int[] partitions = {4, 64};
        private int reps = 3;
        private String precision = "fp64";
        private int loopDim = 10_000;

        @Option(names = "--no-loop", order = 6, description = "skip the loop benchmark")
        private boolean noLoop;

        @Option(
                names = "--profile",
                order = 7,
                description = "log where each switch stage's time goes (rendezvous, compute, switch)")
        private boolean profile;

        @Option(
                names = "--warm-up",
                paramLabel = "W",
                order = 8,
                description = "untimed calls of each method first, to warm up the JIT, 0..1000 (default 30)")
        void warmUps(final String value) {
            warmUps = value.equals("0") ? 0 : one(spec, "--warm-up", value, 1000);
        }

        private int warmUps = 30;

        @Option(
                names = "--check",
                order = 9,
                description = "vectors of whole numbers, whose sum is exact in any order: every switchml sum must equal"
                        + " treeAggregate's bit for bit (each line says exact=true or false; exit code 1 if not)")
        private boolean check;

        @Option(
                names = "--verbose",
                order = 10,
                description = "on failure, the whole stack trace after the one-line message")
        private boolean verbose;

        @Option(
                names = {"-h", "--help"},
                usageHelp = true,
                order = 11,
                description = "this text")
        private boolean help;

        @Option(
                names = {"--elements", "--sizes"},
                paramLabel = "N[,N...]",
                order = 1,
                description = "vector lengths " + "in doubles, 1.." + MAX_DIM
                        + "; accepts 2^p, 64K, 16M (default 10000,1048576,16777216)")
        void sizes(final String value) {
            sizes = ints(spec, "--elements", value, MAX_DIM);
        }

        @Option(
                names = "--partitions",
                paramLabel = "P[,P...]",
                order = 2,
                description = "partition counts of the input, 1..100000 (default 4,64)")
        void partitions(final String value) {
            partitions = ints(spec, "--partitions", value, 100_000);
        }

        @Option(
                names = "--reps",
                paramLabel = "R",
                order = 3,
                description = "timed calls per method and cell, after one warm-up call, 1..1000 (default 3; --repeat R "
                        + "also works)")
        void reps(final String value) {
            reps = one(spec, "--reps", value, 1000);
        }

        /** The name the other benchmarks used for {@code --reps}. */
        @Option(names = "--repeat", paramLabel = "R", hidden = true)
        void repeat(final String value) {
            reps = one(spec, "--repeat", value, 1000);
        }

        @Option(
                names = "--precision",
                paramLabel = "P",
                order = 4,
                description = "spark.switchml.precision: fp64 or fp32 (default fp64)")
        void precision(final String value) {
            if (!value.equals("fp64") && !value.equals("fp32")) {
                throw Cli.usage(spec, "--precision must be fp64 or fp32, got '" + value + "'");
            }
            precision = value;
        }

        @Option(
                names = {"--loop-elements", "--loop-dim"},
                paramLabel = "N",
                order = 5,
                description = "vector length of the loop benchmark, 1.." + MAX_DIM + " (default 10000)")
        void loopDim(final String value) {
            loopDim = one(spec, "--loop-elements", value, MAX_DIM);
        }

        int[] sizes() {
            return sizes;
        }

        int[] partitions() {
            return partitions;
        }

        int reps() {
            return reps;
        }

        String precision() {
            return precision;
        }

        int loopDim() {
            return loopDim;
        }

        boolean loop() {
            return !noLoop;
        }

        boolean profile() {
            return profile;
        }

        boolean help() {
            return help;
        }
    }

    /** Runs the command line; exits with its code unless that is 0. */
    public static void main(final String[] args) {
        Cli.exitOnFailure(run(args, System.out, System.err));
    }

    /** Parses the command line and runs the benchmark; returns the exit code (bad flags never start Spark). */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        final Options o = new Options();
        final int parsed = Cli.parse("SparkAggregateBench", o, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        return Cli.guard("SparkAggregateBench", out, err, o.verbose, () -> bench(o, out) ? 0 : 1);
    }

    /** Runs the benchmark; false when {@code --check} found a sum that differs from treeAggregate's. */
    private static boolean bench(final Options o, final PrintStream out) {
        boolean exact = true;
        final SparkConf conf = new SparkConf()
                .setAppName("switchml-spark-bench")
                .setIfMissing("spark.master", "local-cluster[2,2,3072]")
                .setIfMissing("spark.ui.enabled", "false")
                .setIfMissing("spark.driver.maxResultSize", "4g")
                .setIfMissing("spark.executor.memory", "2560m")
                .setIfMissing("spark.switchml.slotWaitTimeout", "300s")
                .set("spark.switchml.precision", o.precision());
        try (JavaSparkContext jsc = new JavaSparkContext(conf)) {
            PROFILE = o.profile();
            if (o.profile()) { // after Spark set up its logging, which would undo it
                Configurator.setLevel("org.switchml.spark.driver.StageLauncher", Level.TRACE);
            }
            out.printf(
                    "master=%s precision=%s reps=%d cores=%d k=%s localShortcut=%s load %s%n",
                    jsc.master(),
                    o.precision(),
                    o.reps(),
                    Runtime.getRuntime().availableProcessors(),
                    conf.get("spark.switchml.k", "auto"),
                    conf.get("spark.switchml.localShortcut", "true"),
                    loadAverage());
            warmUp(jsc, o.warmUps);
            for (final int parts : o.partitions()) {
                // One record per partition: its seed; the seqOp expands it into the partition's vector.
                final List<Long> seeds = new ArrayList<>();
                for (long s = 1; s <= parts; s++) {
                    seeds.add(s);
                }
                final JavaRDD<Long> rdd = jsc.parallelize(seeds, parts).cache();
                rdd.count();
                for (final int dim : o.sizes()) {
                    exact &= aggregation(out, rdd, dim, parts, o.reps(), o.check);
                }
                rdd.unpersist(true);
            }
            if (o.loop()) {
                loop(out, jsc, o.loopDim());
            }
            out.printf("load at the end %s%n", loadAverage());
        }
        return exact;
    }

    /** The machine's load (/proc/loadavg: 1, 5 and 15 minutes), which the timings depend on; "unknown" elsewhere. */
    private static String loadAverage() {
        try {
            final String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (final IOException e) {
            return "unknown";
        }
    }

    /** Parses the command line ({@code --help} is not handled here); never exits, never starts Spark. */
    static Options parse(final String[] args) throws BenchOptions.UsageException {
        final Options o = new Options();
        try {
            new CommandLine(o).parseArgs(args);
        } catch (final ParameterException e) {
            throw new BenchOptions.UsageException(e.getMessage());
        }
        return o;
    }

    /** A comma-separated list of numbers in 1..max (each as {@link BenchOptions#number} reads it). */
    private static int[] ints(final CommandSpec spec, final String flag, final String value, final int max) {
        final String[] parts = value.split(",", -1);
        final int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = one(spec, flag, parts[i], max);
        }
        return out;
    }

    /** One number in 1..max, as {@link BenchOptions#number} reads it. */
    private static int one(final CommandSpec spec, final String flag, final String value, final int max) {
        try {
            return (int) BenchOptions.number(flag, value, 1, max);
        } catch (final BenchOptions.UsageException e) {
            throw Cli.usage(spec, e.getMessage());
        }
    }

    private static double[] fill(final double[] acc, final long seed) {
        final SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < acc.length; i++) {
            acc[i] += r.nextDouble(-1, 1);
        }
        return acc;
    }

    /** Whole numbers in -1000..1000: any order of summation, and the switch's quantization, keep the sum exact. */
    private static double[] fillWhole(final double[] acc, final long seed) {
        final SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < acc.length; i++) {
            acc[i] += r.nextInt(-1000, 1001);
        }
        return acc;
    }

    private static double[] add(final double[] a, final double[] b) {
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
        return a;
    }

    /**
     * Warms up the JIT of driver and executors (the codec, the switch's and Spark's own paths) with every
     * method, so that the cells compare steady states; a fresh JVM runs the first calls interpreted.
     */
    private static void warmUp(final JavaSparkContext jsc, final int calls) {
        final long t0 = System.nanoTime();
        final JavaRDD<Long> seeds = jsc.parallelize(List.of(1L, 2L, 3L, 4L), 4).cache();
        seeds.count();
        for (int i = 0; i < calls; i++) {
            final int dim = i % 3 == 0 ? 1 << 18 : 10_000;
            SwitchMLAggregator.aggregateWithInfo(seeds.rdd(), dim, new double[dim], SparkAggregateBench::fill);
            seeds.treeAggregate(new double[dim], SparkAggregateBench::fill, SparkAggregateBench::add, 2, i % 2 == 0);
        }
        seeds.unpersist(true);
        System.out.printf("warm-up: %d calls of each method, %.1f s%n", calls, (System.nanoTime() - t0) / 1e9);
    }

    /** One cell; with {@code whole}, returns whether every switchml sum equalled treeAggregate's bit for bit. */
    private static boolean aggregation(
            final PrintStream out,
            final JavaRDD<Long> seeds,
            final int dim,
            final int parts,
            final int reps,
            final boolean whole) {
        final String[] names = {"switchml", "treeAggregate", "treeAggregate+finalAggregateOnExecutor"};
        final double[][] seconds = new double[3][reps];
        final SwitchMLAggregator.SeqOp<Long> seq = whole ? SparkAggregateBench::fillWhole : SparkAggregateBench::fill;
        final org.apache.spark.api.java.function.Function2<double[], Long, double[]> treeSeq =
                whole ? SparkAggregateBench::fillWhole : SparkAggregateBench::fill;
        int workers = 0;
        int shards = 0;
        boolean inMemory = false;
        boolean exact = true;
        double[] viaSwitch = null;
        for (int rep = -1; rep < reps; rep++) { // rep -1 warms up
            for (int m = 0; m < 3; m++) {
                final long t0 = System.nanoTime();
                final double[] sum;
                if (m == 0) {
                    final SwitchMLAggregator.Result r =
                            SwitchMLAggregator.aggregateWithInfo(seeds.rdd(), dim, new double[dim], seq);
                    if (!r.viaSwitch()) {
                        throw new IllegalStateException("fell back: " + r.fallbackReason());
                    }
                    workers = r.workers();
                    shards = r.shards();
                    inMemory = r.inMemory();
                    sum = r.sum();
                    viaSwitch = sum;
                    if (PROFILE) {
                        System.out.println("switch counters of job " + Integer.toUnsignedString(r.jobId()) + ": "
                                + SwitchMLDriver.of(seeds.context())
                                        .finalCounters(r.jobId())
                                        .map(Object::toString)
                                        .orElse("not reported"));
                    }
                } else {
                    sum = seeds.treeAggregate(new double[dim], treeSeq, SparkAggregateBench::add, 2, m == 2);
                    exact &= !whole || Arrays.equals(viaSwitch, sum);
                }
                final double s = (System.nanoTime() - t0) / 1e9;
                if (sum.length != dim) {
                    throw new IllegalStateException("wrong length " + sum.length);
                }
                if (rep >= 0) {
                    seconds[m][rep] = s;
                }
            }
        }
        final double[] median = new double[3];
        for (int m = 0; m < 3; m++) {
            Arrays.sort(seconds[m]);
            median[m] = seconds[m][reps / 2];
        }
        final String how = (inMemory
                        ? "  [in memory: one executor, no packet]"
                        : String.format("  [%d switch workers, %d shard%s]", workers, shards, shards == 1 ? "" : "s"))
                + (whole ? " exact=" + exact : "");
        for (int m = 0; m < 3; m++) {
            out.printf(
                    "aggregate %9d doubles x %3d partitions  %-40s median %8.3f s (min %.3f, max %.3f)%s%n",
                    dim,
                    parts,
                    names[m],
                    median[m],
                    seconds[m][0],
                    seconds[m][reps - 1],
                    m == 0 ? how : String.format("  switchml/this = %.3f", median[0] / median[m]));
        }
        return exact;
    }

    /** A trivial iterative body: the cost measured is the per-iteration machinery, not the math. */
    static final class Body implements ReplicatedLoop.Body<Long> {
        private static final long serialVersionUID = 1L;
        private final int dim;

        Body(final int dim) {
            this.dim = dim;
        }

        @Override
        public double[] contribution(final List<Long> records, final double[] state, final int iteration) {
            final double[] v = new double[dim];
            for (final long seed : records) {
                for (int i = 0; i < dim; i++) {
                    v[i] += state[i] * 0.5 + ((seed + i + iteration) % 7);
                }
            }
            return v;
        }

        @Override
        public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
            final double[] next = new double[dim];
            for (int i = 0; i < dim; i++) {
                next[i] = sum[i] / 4;
            }
            return new ReplicatedLoop.Step(next, new double[] {next[0]}, false);
        }
    }

    private static void loop(final PrintStream out, final JavaSparkContext jsc, final int dim) {
        final JavaRDD<Long> seeds = jsc.parallelize(List.of(1L, 2L, 3L, 4L), 4).cache();
        seeds.count();
        final Body body = new Body(dim);
        final int few = 20;
        final int many = 520;
        ReplicatedLoop.run(seeds, new double[dim], dim, body, new ReplicatedLoop.Options(5, 0, 0)); // warm-up
        ReplicatedLoop.runOnDriver(seeds, new double[dim], dim, body, new ReplicatedLoop.Options(5, 0, 0));
        final List<Double> rows = new ArrayList<>();
        for (final int n : new int[] {few, many}) {
            final long t0 = System.nanoTime();
            ReplicatedLoop.run(seeds, new double[dim], dim, body, new ReplicatedLoop.Options(n, 0, 0));
            rows.add((System.nanoTime() - t0) / 1e9);
        }
        final long t0 = System.nanoTime();
        ReplicatedLoop.runOnDriver(seeds, new double[dim], dim, body, new ReplicatedLoop.Options(few, 0, 0));
        final double driver = (System.nanoTime() - t0) / 1e9;
        final double marginal = (rows.get(1) - rows.get(0)) / (many - few);
        final double perJob = driver / few;
        out.printf(
                "loop %d doubles x 4 partitions: replicated %d iterations %.3f s, %d iterations %.3f s "
                        + "-> %.3f ms per iteration (stage start-up %.3f s)%n",
                dim, few, rows.get(0), many, rows.get(1), marginal * 1e3, rows.get(0) - few * marginal);
        out.printf(
                "loop %d doubles x 4 partitions: one treeAggregate job per iteration %.3f s for %d "
                        + "-> %.2f ms per iteration; replicated/treeAggregate = %.4f (1/%.0f)%n",
                dim, driver, few, perJob * 1e3, marginal / perJob, perJob / marginal);
    }
}

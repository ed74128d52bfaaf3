package org.switchml.examples;

import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLAggregator;
import org.switchml.spark.SwitchMLPlugin;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Times one aggregation of a 2^20 and a 2^24 double vector over 4 partitions: SwitchMLAggregator vs
 * treeAggregate vs treeAggregate with finalAggregateOnExecutor, in the same run; then the
 * per-iteration cost of the replicated loop vs one treeAggregate job per iteration (10^4 elements).
 *
 * <p>Run with SPARK_HOME holding Spark's jars (spark-switchml/target/spark-home after
 * {@code mvn test-compile}), SPARK_SCALA_VERSION=2.13, SPARK_LOCAL_IP=127.0.0.1 and Spark's JVM flags;
 * see docs/benchmarks.md. Arguments: {@code [master] [k] [repetitions] [fp64|fp32]}.
 */
public final class SparkAggregateBench {
    private SparkAggregateBench() {
    }

    public static void main(final String[] args) {
        final String master = args.length > 0 ? args[0] : "local-cluster[2,2,3072]";
        final String k = args.length > 1 ? args[1] : "1024";
        final int reps = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        final String precision = args.length > 3 ? args[3] : "fp64";
        final String cp = System.getProperty("bench.executor.classpath", System.getProperty("java.class.path"));
        final SparkConf conf = new SparkConf().setAppName("switchml-bench").setMaster(master)
                .set("spark.ui.enabled", "false")
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.executor.memory", "2560m")
                .set("spark.driver.maxResultSize", "4g")
                .set("spark.executor.extraClassPath", cp)
                .set("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .set("spark.plugins", SwitchMLPlugin.class.getName())
                .set("spark.switchml.k", k)
                .set("spark.switchml.precision", precision)
                .set("spark.switchml.slotWaitTimeout", "300s")
                // A barrier stage launches only when every task gets a slot in one offer round; with
                // locality preferences (cached input) it may otherwise wait out spark.locality.wait (3s).
                .set("spark.locality.wait", "0s");
        try (JavaSparkContext jsc = new JavaSparkContext(conf)) {
            System.out.printf("master=%s k=%s precision=%s repetitions=%d cores=%d%n", master, k, precision, reps,
                    Runtime.getRuntime().availableProcessors());
            // One record per partition: its seed; the seqOp expands it into the partition's vector.
            final JavaRDD<Long> seeds = jsc.parallelize(List.of(1L, 2L, 3L, 4L), 4).cache();
            seeds.count();
            for (final int log : new int[] {20, 24}) {
                aggregation(seeds, 1 << log, reps);
            }
            loop(jsc);
        }
    }

    private static double[] fill(final double[] acc, final long seed) {
        final SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < acc.length; i++) {
            acc[i] += r.nextDouble(-1, 1);
        }
        return acc;
    }

    private static void aggregation(final JavaRDD<Long> seeds, final int dim, final int reps) {
        final String[] names = {"switchml", "treeAggregate", "treeAggregate(finalAggregateOnExecutor)"};
        final double[][] seconds = new double[3][reps];
        for (int rep = -1; rep < reps; rep++) { // rep -1 warms up
            for (int m = 0; m < 3; m++) {
                final long t0 = System.nanoTime();
                final double[] sum;
                if (m == 0) {
                    final SwitchMLAggregator.Result r = SwitchMLAggregator.aggregateWithInfo(seeds.rdd(), dim,
                            new double[dim], SparkAggregateBench::fill);
                    if (!r.viaSwitch()) {
                        throw new IllegalStateException("fell back: " + r.fallbackReason());
                    }
                    sum = r.sum();
                } else {
                    sum = seeds.treeAggregate(new double[dim], SparkAggregateBench::fill,
                            SparkAggregateBench::add, 2, m == 2);
                }
                final double s = (System.nanoTime() - t0) / 1e9;
                if (sum.length != dim) {
                    throw new IllegalStateException();
                }
                if (rep >= 0) {
                    seconds[m][rep] = s;
                }
            }
        }
        for (int m = 0; m < 3; m++) {
            Arrays.sort(seconds[m]);
            System.out.printf("aggregate 2^%d doubles (%d MiB) x 4 partitions  %-42s median %.3f s  (min %.3f, max %.3f)%n",
                    Integer.numberOfTrailingZeros(dim), dim * 8L >> 20, names[m], seconds[m][reps / 2], seconds[m][0],
                    seconds[m][reps - 1]);
        }
    }

    private static double[] add(final double[] a, final double[] b) {
        for (int i = 0; i < a.length; i++) {
            a[i] += b[i];
        }
        return a;
    }

    /** A trivial iterative body: the cost measured is the per-iteration machinery, not the math. */
    static final class Body implements ReplicatedLoop.Body<Long> {
        private static final long serialVersionUID = 1L;
        private final int dim;

        Body(final int dim) {
            this.dim = dim;
        }

        @Override
        public double[] contribution(final List<Long> partition, final double[] state, final int iteration) {
            final double[] v = new double[dim];
            final long seed = partition.get(0);
            for (int i = 0; i < dim; i++) {
                v[i] = state[i] * 0.5 + ((seed + i + iteration) % 7);
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

    private static void loop(final JavaSparkContext jsc) {
        final int dim = 10_000;
        final JavaRDD<Long> seeds = jsc.parallelize(List.of(1L, 2L, 3L, 4L), 4).cache();
        seeds.count();
        final Body body = new Body(dim);
        final int few = 20;
        final int many = 220;
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
        System.out.printf("loop 10^4 doubles x 4 partitions: replicated %d iterations %.3f s, %d iterations %.3f s "
                        + "-> %.2f ms per iteration (stage start-up %.2f s)%n", few, rows.get(0), many, rows.get(1),
                marginal * 1e3, rows.get(0) - few * marginal);
        System.out.printf("loop 10^4 doubles x 4 partitions: one treeAggregate job per iteration %.3f s for %d "
                + "-> %.2f ms per iteration; ratio replicated/treeAggregate = %.3f%n", driver, few, perJob * 1e3,
                marginal / perJob);
    }
}

package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.switchml.testing.Vectors;
import scala.Tuple2;

/** Shared Spark test set-up: Kryo with registration required, loopback, no UI. */
final class SparkTestSupport {
    private SparkTestSupport() {}

    static SparkConf conf(final String app, final String master, final boolean plugin) {
        final SparkConf conf = new SparkConf()
                .setAppName(app)
                .setMaster(master)
                .set("spark.ui.enabled", "false")
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
                .set("spark.kryo.registrationRequired", "true")
                .set("spark.kryo.registrator", SwitchMLKryoRegistrator.class.getName())
                .set("spark.sql.shuffle.partitions", "4")
                .set("spark.switchml.resultTimeout", "20s");
        if (plugin) {
            conf.set("spark.plugins", SwitchMLPlugin.class.getName());
        }
        return conf;
    }

    /**
     * {@link #conf} with the plugin for a multi-JVM {@code local-cluster[...]} master: executors of 512 MiB that load
     * this build's classes, and a pre-launch wait long enough for their JVMs to start on two busy cores.
     */
    static SparkConf localCluster(final String app, final String master) {
        final Path target = Path.of("target").toAbsolutePath();
        return conf(app, master, true)
                .set("spark.executor.memory", "512m")
                .set("spark.executor.extraClassPath", target.resolve("classes") + ":" + target.resolve("test-classes"))
                .set("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .set("spark.switchml.slotWaitTimeout", "180s");
    }

    /** {@code rows} seeded vectors of length {@code dim} (values spanning many magnitudes), in {@code parts} partitions. */
    static JavaRDD<double[]> rows(
            final JavaSparkContext jsc, final long seed, final int rows, final int dim, final int parts) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final List<double[]> data = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++) {
            data.add(Vectors.mixed(rnd, dim));
        }
        return jsc.parallelize(data, parts);
    }

    /** seqOp for rows: acc += row. */
    static double[] addRow(final double[] acc, final double[] row) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += row[i];
        }
        return acc;
    }

    /** Each partition's fold, in partition order (what every worker contributes). */
    static double[][] partials(final JavaRDD<double[]> rdd, final int dim) {
        final List<double[]> p = rdd.mapPartitions(it -> {
                    double[] acc = new double[dim];
                    while (it.hasNext()) {
                        acc = addRow(acc, it.next());
                    }
                    return List.of(acc).iterator();
                })
                .collect();
        return p.toArray(new double[0][]);
    }

    /**
     * What one executor streams when all {@code tasks} tasks of a stage run on it and nothing else
     * decides the plan: source partition p goes to task p mod tasks (ties go to the lowest task), each task
     * folds its partitions in order, and the executor adds the tasks' vectors in task order.
     */
    static double[] oneExecutorVector(final JavaRDD<double[]> rdd, final int dim, final int tasks) {
        // Rows tagged with their partition, in partition order (collect keeps it).
        final List<Tuple2<Integer, double[]>> tagged = rdd.mapPartitionsWithIndex(
                        (i, it) -> {
                            final List<Tuple2<Integer, double[]>> out = new ArrayList<>();
                            it.forEachRemaining(r -> out.add(new Tuple2<>(i, r)));
                            return out.iterator();
                        },
                        true)
                .collect();
        final double[][] acc = new double[tasks][dim];
        for (final Tuple2<Integer, double[]> t : tagged) {
            addRow(acc[t._1() % tasks], t._2());
        }
        final double[] out = acc[0].clone();
        for (int t = 1; t < tasks; t++) {
            addRow(out, acc[t]);
        }
        return out;
    }

    /** |a - b| <= rel * (max |b| over the element's block of {@code block} elements), element-wise. */
    static void assertWithinBlockRelative(
            final double[] expected, final double[] actual, final int block, final double rel) {
        assertEquals(expected.length, actual.length);
        for (int start = 0; start < expected.length; start += block) {
            double max = 0;
            for (int i = start; i < Math.min(expected.length, start + block); i++) {
                max = Math.max(max, Math.abs(expected[i]));
            }
            for (int i = start; i < Math.min(expected.length, start + block); i++) {
                final double err = Math.abs(expected[i] - actual[i]);
                assertTrue(
                        err <= rel * max,
                        "element " + i + ": expected " + expected[i] + " got " + actual[i] + " (error " + err + " > "
                                + rel + " x block max " + max + ")");
            }
        }
    }
}

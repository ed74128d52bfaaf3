package org.switchml.it;

import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import org.switchml.control.SwitchController;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.SwitchCounters;
import org.switchml.protocol.Wire;
import org.switchml.service.SwitchTotals;
import org.switchml.spark.ReplicatedLoop;
import org.switchml.spark.SwitchMLAggregator;
import org.switchml.spark.driver.DriverRuntimes;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.spark.registrar.JobRegistrar;
import org.switchml.spark.registrar.JobServiceRegistrar;

/**
 * A Spark application as a user writes one, submitted with {@code spark-submit --jars spark-switchml.jar}:
 * it builds its data with Spark SQL, sums it through the switch ({@link SwitchMLAggregator}) and runs a
 * short {@link ReplicatedLoop}, checks both against Spark's own treeAggregate and driver loop, prints
 * one line starting with {@code DEPLOY-CHECK OK} or {@code DEPLOY-CHECK FAILED}, and exits 0 or 1.
 *
 * <p>Arguments: {@code ROWS DIM PARTITIONS EXPECTED_WORKERS SEED}.
 */
public final class DeployCheckApp {
    private DeployCheckApp() {}

    public static void main(final String[] args) {
        final int rows = Integer.parseInt(args[0]);
        final int dim = Integer.parseInt(args[1]);
        final int partitions = Integer.parseInt(args[2]);
        final int expectedWorkers = Integer.parseInt(args[3]);
        final long seed = Long.parseLong(args[4]);
        System.out.println("DEPLOY-CHECK seed " + seed);
        final SparkSession spark =
                SparkSession.builder().appName("switchml-deploy-check").getOrCreate();
        int code = 1;
        try {
            final String problem = check(spark, rows, dim, partitions, expectedWorkers, seed);
            if (problem == null) {
                code = 0;
            } else {
                System.out.println("DEPLOY-CHECK FAILED " + problem);
            }
        } catch (final RuntimeException e) {
            System.out.println("DEPLOY-CHECK FAILED " + e);
            e.printStackTrace(System.out);
        } finally {
            spark.stop();
        }
        System.exit(code);
    }

    private static String check(
            final SparkSession spark,
            final int rows,
            final int dim,
            final int partitions,
            final int expectedWorkers,
            final long seed) {
        final JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        // Spark SQL makes the ids; a shuffle (repartition) sits between them and the aggregation.
        final JavaRDD<double[]> vectors = spark.range(0, rows, 1, 7)
                .toJavaRDD()
                .map(id -> vector(seed, id, dim))
                .repartition(partitions)
                .cache();
        final long t0 = System.nanoTime();
        final SwitchMLAggregator.Result r =
                SwitchMLAggregator.aggregateWithInfo(vectors.rdd(), dim, new double[dim], DeployCheckApp::add);
        final double switchMs = (System.nanoTime() - t0) / 1e6;
        if (!r.viaSwitch()) {
            return "the sum did not go through the switch: " + r.fallbackReason();
        }
        if (r.workers() != expectedWorkers) {
            return "expected " + expectedWorkers + " switch workers (executors), got " + r.workers();
        }
        final double[] tree = vectors.treeAggregate(new double[dim], DeployCheckApp::add, DeployCheckApp::add);
        final double err = worstBlockRelativeError(tree, r.sum(), 64);
        if (!(err <= 1e-12)) {
            return "sum differs from treeAggregate by " + err + " of a block's maximum (bound 1e-12)";
        }
        final ReplicatedLoop.Options opts = new ReplicatedLoop.Options(5, 2, 0);
        final ReplicatedLoop.Result loop = ReplicatedLoop.run(vectors, new double[dim], dim, new Accumulate(), opts);
        final ReplicatedLoop.Result onDriver =
                ReplicatedLoop.runOnDriver(vectors, new double[dim], dim, new Accumulate(), opts);
        if (!loop.viaSwitch() || loop.iterations() != 5 || !loop.checkpoints().equals(List.of(2, 4, 5))) {
            return "replicated loop: viaSwitch " + loop.viaSwitch() + ", iterations " + loop.iterations()
                    + ", checkpoints " + loop.checkpoints();
        }
        final double loopErr = worstBlockRelativeError(onDriver.state(), loop.state(), 64);
        if (!(loopErr <= 1e-11)) {
            return "replicated loop differs from the driver loop by " + loopErr;
        }
        printCounters(spark);
        System.out.println("DEPLOY-CHECK OK viaSwitch=true workers=" + r.workers() + " partitions="
                + vectors.getNumPartitions() + " dim=" + dim + " sumError=" + err + " loopError=" + loopErr
                + " switchMs=" + Math.round(switchMs) + " fallbacks="
                + DriverRuntimes.forContext(spark.sparkContext()).fallbackCount());
        return null;
    }

    /**
     * Prints the switch's P4 counters, summed over every job's cells: read over P4Runtime by the embedded switch's
     * controller, or from the shared switch's job service, which sums them the same way:
     * {@code DEPLOY-CHECK COUNTERS target=... in=N out=N retransmissions=N STALE_SEQ=N ...}.
     * Waits (bounded) until packets in − packets out = STALE_SEQ + DUPLICATE_PENDING, which every switch
     * running the protocol satisfies once no packet is between its ingress and egress counters.
     */
    static void printCounters(final SparkSession spark) {
        final JobRegistrar reg = DriverRuntimes.forContext(spark.sparkContext()).registrar();
        final Supplier<SwitchTotals> read;
        final String target;
        if (reg instanceof JobServiceRegistrar s) {
            read = s::switchTotals;
            target = s.requiredK() == Wire.P4_K ? "BMV2" : "SOFTWARE";
        } else if (reg instanceof EmbeddedSwitchRegistrar e) {
            final SwitchController c = e.controller();
            read = () -> new SwitchTotals(
                    new JobCounters(
                            sum(c.readCounter(P4Names.JOB_PACKETS_IN), -1),
                            sum(c.readCounter(P4Names.JOB_PACKETS_OUT), -1),
                            sum(c.readCounter(P4Names.JOB_RETRANSMISSIONS), -1),
                            jobDrops(c.readCounter(P4Names.JOB_DROPS))),
                    c.readSwitchCounters());
            target = String.valueOf(c.target());
        } else {
            System.out.println("DEPLOY-CHECK COUNTERS unavailable: registrar " + reg);
            return;
        }
        final long deadline = System.nanoTime() + 10_000_000_000L;
        String line;
        while (true) {
            final SwitchTotals t = read.get();
            final StringBuilder sb = new StringBuilder("DEPLOY-CHECK COUNTERS target=" + target + " in="
                    + t.jobs().packetsIn() + " out=" + t.jobs().packetsOut() + " retransmissions="
                    + t.jobs().retransmissions());
            for (final DropReason d : DropReason.values()) {
                sb.append(' ').append(d).append('=').append(t.jobs().drops().get(d));
            }
            final SwitchCounters sw = t.switchWide();
            sb.append(" switchMALFORMED=")
                    .append(sw.drops(DropReason.MALFORMED))
                    .append(" switchUNKNOWN_JOB=")
                    .append(sw.drops(DropReason.UNKNOWN_JOB))
                    .append(" notSwitchml=")
                    .append(sw.notSwitchml());
            line = sb.toString();
            final long stale = t.jobs().drops().get(DropReason.STALE_SEQ);
            final long dup = t.jobs().drops().get(DropReason.DUPLICATE_PENDING);
            if (t.jobs().packetsIn() - t.jobs().packetsOut() == stale + dup || System.nanoTime() - deadline > 0) {
                break;
            }
            try {
                Thread.sleep(50); // bounded polling: a packet may be between the ingress and egress counters
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        System.out.println(line);
    }

    /** Drops by reason, summed over every job's cells ({@code job_index * 16 + reason}). */
    private static DropCounts jobDrops(final long[] cells) {
        return DropCounts.of(r -> sum(cells, r.ordinal()));
    }

    /** Sum of every cell ({@code reason} < 0) or of the cells {@code job_index * 16 + reason}. */
    private static long sum(final long[] cells, final int reason) {
        long s = 0;
        for (int i = 0; i < cells.length; i++) {
            if (reason < 0 || i % 16 == reason) {
                s += cells[i];
            }
        }
        return s;
    }

    /** Row {@code id}'s vector: seeded, values over many magnitudes. */
    static double[] vector(final long seed, final long id, final int dim) {
        final SplittableRandom rnd = new SplittableRandom(seed ^ (id * 0x9E3779B97F4A7C15L));
        final double[] v = new double[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = rnd.nextGaussian() * Math.scalb(1.0, rnd.nextInt(-20, 20));
        }
        return v;
    }

    static double[] add(final double[] acc, final double[] row) {
        for (int i = 0; i < acc.length; i++) {
            acc[i] += row[i];
        }
        return acc;
    }

    /** max over blocks of max |a - b| / max |a| in the block. */
    static double worstBlockRelativeError(final double[] expected, final double[] actual, final int block) {
        double worst = 0;
        for (int start = 0; start < expected.length; start += block) {
            double max = 0;
            double err = 0;
            for (int i = start; i < Math.min(expected.length, start + block); i++) {
                max = Math.max(max, Math.abs(expected[i]));
                err = Math.max(err, Math.abs(expected[i] - actual[i]));
            }
            worst = Math.max(worst, max == 0 ? err : err / max);
        }
        return worst;
    }

    /** state += (sum of all rows) / rows, every iteration. */
    static final class Accumulate implements ReplicatedLoop.Body<double[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public double[] contribution(final List<double[]> records, final double[] state, final int iteration) {
            final double[] v = new double[state.length];
            for (final double[] r : records) {
                add(v, r);
            }
            return v;
        }

        @Override
        public ReplicatedLoop.Step update(final double[] state, final double[] sum, final int iteration) {
            final double[] next = state.clone();
            add(next, sum);
            return new ReplicatedLoop.Step(next, new double[] {next[0]}, false);
        }
    }
}

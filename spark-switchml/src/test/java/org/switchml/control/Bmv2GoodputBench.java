package org.switchml.control;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.switchml.client.ClientStats;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.Seeds;

/**
 * BMv2's allreduce goodput (docs/benchmarks.md, "BMv2"): the topology of {@link Bmv2AllReduceTest}, float[]
 * vectors of 2^16 elements, n = 1, 2, 4 workers in their own namespaces, pools of 16 and 64 slots; one
 * untimed call, then {@value #TIMED} timed calls; per call the slowest worker's wall time, median over
 * the timed calls. A measurement with nothing to assert, so a program rather than a test; it lives
 * beside the BMv2 test bed it uses. Run it as root with the P4 tools (p4/README.md) from the repository
 * root:
 * <pre>{@code
 * mvn -B -ntp -o -pl spark-switchml test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test.classpath -Dmdep.includeScope=test
 * java -cp spark-switchml/target/test-classes:spark-switchml/target/classes:$(cat spark-switchml/target/test.classpath) \
 *     org.switchml.control.Bmv2GoodputBench
 * }</pre>
 * (a plain {@code java} command: the worker JVMs it starts take this JVM's {@code java.class.path}).
 */
final class Bmv2GoodputBench {
    private static final int ELEMENTS = 1 << 16;
    private static final int TIMED = 3;

    private Bmv2GoodputBench() {}

    /** Runs the benchmark and prints its table; exits with status 2 when a BMv2 tool is missing. */
    public static void main(final String[] args) throws Exception {
        final String missing = Bmv2Bed.missing();
        if (missing != null) {
            System.err.println("Bmv2GoodputBench: missing " + missing + " (p4/README.md, 'Getting the tools')");
            System.exit(2);
        }
        final long seed = Seeds.seed("bmv2 goodput", 7400L);
        final Path work = Path.of("target", "bmv2-goodput").toAbsolutePath();
        final StringBuilder table =
                new StringBuilder("| n | pool | elements | Melem/s/w | MB/s/w | switch contributions/s "
                        + "| retransmissions |\n|---:|---:|---:|---:|---:|---:|---:|\n");
        try (Bmv2Bed bed = Bmv2Bed.up("bn", 4)) {
            int jobId = 9500;
            for (final int pool : new int[] {16, 64}) {
                for (final int n : new int[] {1, 2, 4}) {
                    final String label = "n" + n + "-pool" + pool;
                    final Path dir = work.resolve(label);
                    Bmv2AllReduceTest.deleteTree(dir);
                    Files.createDirectories(dir);
                    final int[] hosts = new int[n];
                    final List<InetSocketAddress> endpoints = new ArrayList<>();
                    for (int r = 0; r < n; r++) {
                        hosts[r] = r + 1;
                        endpoints.add(new InetSocketAddress("10.0.0." + (r + 1), 50_001));
                    }
                    final RegisteredJob job = bed.controller.registerJob(new JobSpec(jobId++, 1, 64, pool, endpoints));
                    Bmv2AllReduceTest.launch(
                            bed,
                            dir,
                            label,
                            List.of(job),
                            List.of(new Bmv2AllReduceTest.JobPlan(hosts, 50_001, seed)),
                            new int[] {ELEMENTS},
                            Map.of("reps", Integer.toString(1 + TIMED), "floatOnly", "true"),
                            200);
                    final long[] slowest = new long[1 + TIMED];
                    long retx = 0;
                    for (int r = 0; r < n; r++) {
                        final NamespaceWorker.Output out = NamespaceWorker.read(dir.resolve("job0-rank" + r + ".bin"));
                        for (int c = 0; c < slowest.length; c++) {
                            slowest[c] = Math.max(slowest[c], out.nanos()[c]);
                        }
                        retx += out.stats().retransmissions();
                    }
                    final long[] timed = Arrays.copyOfRange(slowest, 1, slowest.length);
                    Arrays.sort(timed);
                    final double seconds = timed[timed.length / 2] / 1e9;
                    final long packets = job.spec().poolSize() >= 0
                            ? (ELEMENTS + 63) / 64 + Math.min(pool, (ELEMENTS + 63) / 64)
                            : 0;
                    final ClientStats any =
                            NamespaceWorker.read(dir.resolve("job0-rank0.bin")).stats();
                    table.append(String.format(
                            "| %d | %d | 2^16 | %.3f | %.2f | %.0f | %d |%n",
                            n,
                            pool,
                            ELEMENTS / seconds / 1e6,
                            4.0 * ELEMENTS / seconds / 1e6,
                            n * packets / seconds,
                            retx));
                    System.out.println(
                            "[bmv2-bench] " + label + ": median " + Math.round(seconds * 1000) + " ms per call, "
                                    + "calls "
                                    + Arrays.toString(Arrays.stream(slowest)
                                            .map(t -> t / 1_000_000)
                                            .toArray())
                                    + " ms, rank 0 " + any);
                    bed.controller.removeJob(job.spec().jobId());
                }
            }
        }
        System.out.println("[bmv2-bench] results:\n" + table);
    }
}

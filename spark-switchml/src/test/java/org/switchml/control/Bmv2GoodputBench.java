package org.switchml.control;

import org.junit.jupiter.api.Test;
import org.switchml.client.ClientStats;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.Seeds;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * BMv2's allreduce goodput (docs/benchmarks.md, "BMv2"): the topology of {@link Bmv2AllReduceTest}, float[]
 * vectors of 2^16 elements, n = 1, 2, 4 workers in their own namespaces, pools of 16 and 64 slots; one
 * untimed call, then {@value #TIMED} timed calls; per call the slowest worker's wall time, median over
 * the timed calls. Not part of the test suite (the name does not end in Test): run it with
 * {@code mvn -B -ntp -o -pl spark-switchml test -Dtest=Bmv2GoodputBench} as root with the P4 tools.
 */
class Bmv2GoodputBench {
    private static final int ELEMENTS = 1 << 16;
    private static final int TIMED = 3;

    @Test
    void goodput() throws Exception {
        Bmv2Bed.assumeTools("Bmv2GoodputBench");
        final long seed = Seeds.seed("bmv2 goodput", 7400L);
        final Path work = Path.of("target", "bmv2-goodput").toAbsolutePath();
        final StringBuilder table = new StringBuilder("| n | pool | elements | Melem/s/w | MB/s/w | switch contributions/s "
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
                    Bmv2AllReduceTest.launch(bed, dir, label, List.of(job),
                            List.of(new Bmv2AllReduceTest.JobPlan(hosts, 50_001, seed)), new int[] {ELEMENTS},
                            Map.of("reps", Integer.toString(1 + TIMED), "floatOnly", "true"), 200);
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
                    final long packets = job.spec().poolSize() >= 0 ? (ELEMENTS + 63) / 64 + Math.min(pool, (ELEMENTS + 63) / 64) : 0;
                    final ClientStats any = NamespaceWorker.read(dir.resolve("job0-rank0.bin")).stats();
                    table.append(String.format("| %d | %d | 2^16 | %.3f | %.2f | %.0f | %d |%n", n, pool,
                            ELEMENTS / seconds / 1e6, 4.0 * ELEMENTS / seconds / 1e6, n * packets / seconds, retx));
                    System.out.println("[bmv2-bench] " + label + ": median " + Math.round(seconds * 1000) + " ms per call, "
                            + "calls " + Arrays.toString(Arrays.stream(slowest).map(t -> t / 1_000_000).toArray())
                            + " ms, rank 0 " + any);
                    bed.controller.removeJob(job.spec().jobId());
                }
            }
        }
        System.out.println("[bmv2-bench] results:\n" + table);
    }
}

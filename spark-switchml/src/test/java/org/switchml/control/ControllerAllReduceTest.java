package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/** The full allreduce with the job set up through the controller: bit-exact against the reference. */
class ControllerAllReduceTest {
    private static final int K = 64;
    private static final AtomicInteger IDS = new AtomicInteger(3000);
    private static ControlTestBed bed;

    @BeforeAll
    static void start() {
        bed = ControlTestBed.start(2);
    }

    @AfterAll
    static void stop() {
        bed.close();
    }

    @ParameterizedTest(name = "{0} n={1} length={2}")
    @CsvSource({"float, 2, 10000", "float, 5, 100001", "fp64, 3, 10000", "fp64, 8, 50000", "float, 16, 4097"})
    void sumsAreBitExactOnEveryWorker(final String mode, final int n, final int length) {
        final boolean fp64 = mode.equals("fp64");
        final SplittableRandom rnd = new SplittableRandom(
                Seeds.seed("controller " + mode + " n=" + n + " len=" + length, 1234L * n + length));
        final double[][] in = new double[n][];
        final float[][] fin = new float[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, length);
            fin[r] = Vectors.toFloats(in[r]);
            if (!fp64) {
                in[r] = Vectors.toDoubles(fin[r]);
            }
        }
        final ClientOptions options = ClientOptions.defaults().withFp64(fp64);
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            clients.add(SwitchMLClient.open(options));
            endpoints.add(clients.get(r).localAddress());
        }
        final int jobId = IDS.incrementAndGet();
        try {
            final JobSpec spec = bed.controller
                    .registerJob(new JobSpec(jobId, 1, K, 128, endpoints))
                    .spec();
            final List<JobSession> sessions = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                sessions.add(clients.get(r).join(spec, r, bed.sw.address()));
            }
            if (fp64) {
                final List<double[]> out =
                        TestCluster.parallel(n, r -> sessions.get(r).allReduce(in[r]));
                final double[] expected = Reference.fp64(in, K);
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(expected, out.get(r), 0.0, "rank " + r + " differs from the reference");
                }
            } else {
                final List<float[]> out =
                        TestCluster.parallel(n, r -> sessions.get(r).allReduce(fin[r]));
                final float[] expected = Vectors.toFloats(Reference.fp32(in, K));
                for (int r = 0; r < n; r++) {
                    assertArrayEquals(expected, out.get(r), "rank " + r + " differs from the reference");
                }
            }
            final JobCounters c = bed.controller.readJobCounters(jobId);
            assertEquals(0, c.drops(DropReason.UNKNOWN_SENDER), c.toString());
            assertEquals(0, c.drops(DropReason.WRONG_K), c.toString());
            assertEquals(0, c.drops(DropReason.STALE_GENERATION), c.toString());
            assertTrue(c.packetsOut() >= n, c.toString());
        } finally {
            bed.controller.removeJob(jobId);
            for (final SwitchMLClient cl : clients) {
                cl.close();
            }
        }
    }
}

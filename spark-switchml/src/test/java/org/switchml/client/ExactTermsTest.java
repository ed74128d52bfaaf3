package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Quantization;
import org.switchml.protocol.ShardedJob;
import org.switchml.protocol.VectorCodec;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/**
 * A sum of terms (say one vector per source partition) spread over the workers in any way, each worker sending its
 * share as {@link VectorCodec#forTerms}, gives the same bits: all terms on one worker summed alone, on two or three
 * workers through one switch, grouped and ordered differently, and on a job split among two shards. The documented
 * rule, computed here on its own (each term quantized with the block's largest exponent over all terms, the
 * integers summed, dequantized), is the positive control.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ExactTermsTest {
    private static final int K = 64;
    private static final int TERMS = 7;
    private static final AtomicInteger JOB_IDS = new AtomicInteger(700);
    private static SoftwareSwitch hub;
    private static final List<SoftwareSwitch> shards = new ArrayList<>();

    @BeforeAll
    static void start() {
        hub = SoftwareSwitch.start(SwitchOptions.loopback(1));
        for (int i = 0; i < 2; i++) {
            shards.add(SoftwareSwitch.start(SwitchOptions.loopback(1)));
        }
    }

    @AfterAll
    static void stop() {
        hub.close();
        shards.forEach(SoftwareSwitch::close);
    }

    /** The terms of {@code groups} (term indices per worker) summed through one job on {@code switches}. */
    private static double[] through(
            final double[][] terms, final int[][] groups, final List<SoftwareSwitch> switches, final boolean fp64) {
        final int n = groups.length;
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        try {
            for (int r = 0; r < n; r++) {
                final SwitchMLClient c = SwitchMLClient.open(ClientOptions.defaults());
                clients.add(c);
                endpoints.add(c.localAddress());
            }
            final int jobId = JOB_IDS.incrementAndGet();
            final List<ShardedJob.Part> parts = new ArrayList<>();
            for (final SoftwareSwitch sw : switches) {
                final JobSpec spec = new JobSpec(jobId, 0, K, 16, endpoints);
                sw.registerJob(spec);
                parts.add(new ShardedJob.Part(sw.address(), spec, 1));
            }
            final ShardedJob job = new ShardedJob(parts);
            final List<double[]> out = TestCluster.parallel(n, r -> {
                final double[][] mine = new double[groups[r].length][];
                for (int i = 0; i < mine.length; i++) {
                    mine[i] = terms[groups[r][i]].clone();
                }
                final double[] result = new double[terms[0].length];
                final ShardedSession s = clients.get(r).join(job, r, 20_000);
                s.allReduce(VectorCodec.forTerms(mine, result, K, TERMS, fp64), 20_000, null);
                return result;
            });
            for (int r = 1; r < n; r++) {
                assertArrayEquals(out.get(0), out.get(r), 0.0, "worker " + r + " of " + Arrays.deepToString(groups));
            }
            return out.get(0);
        } finally {
            clients.forEach(SwitchMLClient::close);
        }
    }

    /** The rule, on its own: per block, the largest exponent over all terms; each term quantized; integers summed. */
    private static double[] reference(final double[][] terms, final boolean fp64) {
        final int length = terms[0].length;
        final int m = fp64 ? K / 2 : K;
        int b = 30;
        while (((long) TERMS << b) > Integer.MAX_VALUE) {
            b--;
        }
        final double[] out = new double[length];
        for (int start = 0; start < length; start += m) {
            final int end = Math.min(length, start + m);
            double max = 0;
            for (final double[] t : terms) {
                for (int i = start; i < end; i++) {
                    max = Math.max(max, Math.abs(t[i]));
                }
            }
            final short e = Quantization.exponentOf(max);
            for (int i = start; i < end; i++) {
                if (max == 0) {
                    out[i] = 0;
                    continue;
                }
                long q = 0;
                final int shift = fp64 ? Quantization.shift64(e, b) : Quantization.shift32(e, b);
                for (final double[] t : terms) {
                    q += (long) Math.rint(Math.scalb(t[i], shift));
                }
                out[i] = Math.scalb((double) q, -shift);
            }
        }
        return out;
    }

    @ParameterizedTest(name = "fp64={0}")
    @ValueSource(booleans = {true, false})
    void anySpreadOfTheTermsGivesTheSameBits(final boolean fp64) {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("ExactTermsTest" + fp64, fp64 ? 71 : 72));
        final int length = 5_000;
        final double[][] terms = new double[TERMS][];
        for (int p = 0; p < TERMS; p++) {
            terms[p] = Vectors.mixed(rnd, length);
        }
        final double[] expected = reference(terms, fp64);

        final double[][] alone = new double[TERMS][];
        for (int p = 0; p < TERMS; p++) {
            alone[p] = terms[p].clone();
        }
        final double[] inMemory = new double[length];
        VectorCodec.forTerms(alone, inMemory, K, TERMS, fp64).sumAlone();
        assertArrayEquals(expected, inMemory, 0.0, "all terms on one worker, summed alone");

        final List<SoftwareSwitch> one = List.of(hub);
        assertArrayEquals(expected, through(terms, new int[][] {{0, 1, 2, 3}, {4, 5, 6}}, one, fp64), 0.0, "2 workers");
        assertArrayEquals(
                expected,
                through(terms, new int[][] {{6, 0, 3}, {5, 1}, {4, 2}}, one, fp64),
                0.0,
                "3 workers, other groups and orders");
        assertArrayEquals(
                expected, through(terms, new int[][] {{2}, {0, 1, 3, 4, 5}, {6}}, one, fp64), 0.0, "3 workers, uneven");
        assertArrayEquals(
                expected,
                through(terms, new int[][] {{1, 3, 5}, {0, 2, 4, 6}}, shards, fp64),
                0.0,
                "2 workers on a job split among 2 shards");
        // positive control: a float sum per worker first is another result for some spread
        double differ = 0;
        final double[] floatPath = new double[length];
        for (final int[] g : new int[][] {{0, 1, 2, 3}, {4, 5, 6}}) {
            final double[] s = terms[g[0]].clone();
            for (int i = 1; i < g.length; i++) {
                for (int j = 0; j < length; j++) {
                    s[j] += terms[g[i]][j];
                }
            }
            for (int j = 0; j < length; j++) {
                floatPath[j] += s[j];
            }
        }
        for (int j = 0; j < length; j++) {
            differ += floatPath[j] != expected[j] ? 1 : 0;
        }
        System.out.printf(
                "[exact terms] fp64=%s: %d of %d elements of the exact sum differ from a float sum%n",
                fp64, (long) differ, length);
    }

    @ParameterizedTest(name = "fp64={0}")
    @ValueSource(booleans = {true, false})
    void aWorkerCannotHoldMoreTermsThanTheSumHas(final boolean fp64) {
        final double[][] three = {new double[4], new double[4], new double[4]};
        assertThrows(IllegalArgumentException.class, () -> VectorCodec.forTerms(three, new double[4], K, 2, fp64));
        assertThrows(
                IllegalStateException.class,
                () -> VectorCodec.forTerms(three, new double[4], K, 4, fp64).sumAlone());
        assertEquals(3, three.length);
    }
}

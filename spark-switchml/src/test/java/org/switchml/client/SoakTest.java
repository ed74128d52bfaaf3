package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.testing.LeakDetection;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.transport.FaultPlan;

/**
 * 10,000 consecutive small allreduces under 1 % loss on every send (workers and switch), with Netty's leak
 * detector at PARANOID (every buffer tracked): every call exact, no buffer leaked, and direct memory flat
 * after the warm-up (the pooled allocator takes no new chunk, the JVM's direct buffers do not grow).
 */
class SoakTest {
    private static final int CALLS = 10_000;
    private static final int WARM = 1_000;
    private static final int N = 2;
    private static final int K = 64;
    private static final int LENGTH = 4 * K;

    @Test
    void tenThousandSmallAllReducesUnderOnePercentLossLeakNothingAndKeepDirectMemoryFlat() {
        final long seed = Seeds.seed("soak", 101);
        assertEquals(io.netty.util.ResourceLeakDetector.Level.PARANOID, LeakDetection.level());
        LeakDetection.check("the start of the soak"); // only this test's buffers count below
        final FaultPlan loss = new FaultPlan(0.01, 0, 0, 0, seed);
        final ClientOptions opts =
                ClientOptions.defaults().withResultTimeoutMs(10_000).withFaults(loss);
        final long[][] samples = new long[2][];
        final long t0 = System.nanoTime();
        try (TestCluster cluster = TestCluster.start(
                        new SwitchOptions("127.0.0.1", Collections.nCopies(2, 0), false, loss.withSeed(seed + 1)));
                TestCluster.Job job = cluster.job(31, 0, N, K, 8, opts)) {
            TestCluster.parallel(N, r -> {
                final int[] in = new int[LENGTH];
                final int[] want = new int[LENGTH];
                for (int call = 0; call < CALLS; call++) {
                    for (int i = 0; i < LENGTH; i++) {
                        in[i] = value(call, i, r);
                        want[i] = value(call, i, 0) + value(call, i, 1);
                    }
                    final int[] got = job.session(r).allReduce(in);
                    if (!Arrays.equals(want, got)) {
                        assertArrayEquals(want, got, "rank " + r + " call " + call);
                    }
                    if (r == 0 && (call == WARM || call == CALLS - 1)) {
                        samples[call == WARM ? 0 : 1] = directMemory();
                    }
                }
                return null;
            });
            final ClientStats st = job.clients().get(0).stats();
            System.out.println(
                    "[soak] " + CALLS + " calls x " + N + " workers in " + (System.nanoTime() - t0) / 1_000_000
                            + " ms; rank 0: " + st + "; switch: " + cluster.sw.traffic());
            assertTrue(st.retransmissions() > 0, "1 % loss caused no retransmission: the soak tested no recovery");
        }
        System.out.println("[soak] direct memory after " + WARM + " calls " + describe(samples[0]) + ", after " + CALLS
                + " " + describe(samples[1]));
        final long chunk = PooledByteBufAllocator.DEFAULT.metric().chunkSize();
        assertTrue(
                samples[1][0] - samples[0][0] <= chunk,
                "Netty's pooled direct memory grew by " + (samples[1][0] - samples[0][0]) + " bytes (chunk " + chunk
                        + ")");
        assertTrue(
                samples[1][2] - samples[0][2] <= 1 << 20,
                "the JVM's direct buffers grew by " + (samples[1][2] - samples[0][2]) + " bytes");
        if (samples[0][1] >= 0) {
            assertTrue(
                    samples[1][1] - samples[0][1] <= chunk,
                    "Netty's direct memory counter grew by " + (samples[1][1] - samples[0][1]) + " bytes");
        }
        LeakDetection.check("10,000 allreduces under loss");
    }

    private static int value(final int call, final int i, final int rank) {
        return (call * 31 + i * 7 + rank * 1_000_003) % 100_000 - 50_000;
    }

    /** Netty's pooled direct memory, Netty's own direct counter (-1 when it does not count), the JVM's direct pool. */
    private static long[] directMemory() {
        long jvm = 0;
        for (final BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (b.getName().equals("direct")) {
                jvm = b.getMemoryUsed();
            }
        }
        return new long[] {
            PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory(), PlatformDependent.usedDirectMemory(), jvm
        };
    }

    private static String describe(final long[] s) {
        return List.of("pooled " + s[0], "netty " + s[1], "jvm " + s[2]).toString();
    }
}

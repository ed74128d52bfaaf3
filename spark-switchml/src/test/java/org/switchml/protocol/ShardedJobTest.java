package org.switchml.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The split of a sharded job's blocks, and the weights that balance every link's load. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ShardedJobTest {
    private static final List<InetSocketAddress> WORKERS =
            List.of(new InetSocketAddress("127.0.0.1", 1000), new InetSocketAddress("127.0.0.1", 1001));

    private static ShardedJob job(final int... weights) {
        final List<ShardedJob.Part> parts = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            parts.add(new ShardedJob.Part(
                    new SwitchAddress("127.0.0.1", List.of(2000 + i)), new JobSpec(7, 0, 64, 8, WORKERS), weights[i]));
        }
        return new ShardedJob(parts);
    }

    @Test
    void blocksAreSplitInProportionToTheWeightsWithNoneLostOrShared() {
        assertArrayEquals(new int[] {0, 3, 6, 10}, job(1, 1, 1).blockStarts(10));
        assertArrayEquals(new int[] {0, 0, 1}, job(1, 1).blockStarts(1), "one block: the second shard owns it");
        assertArrayEquals(new int[] {0, 0, 0, 0}, job(1, 2, 3).blockStarts(0));
        assertArrayEquals(new int[] {0, 2, 2, 8}, job(1, 0, 3).blockStarts(8), "a weight of 0 owns nothing");
        for (int blocks = 0; blocks < 300; blocks++) {
            final int[] s = job(5, 1, 0, 7).blockStarts(blocks);
            assertEquals(0, s[0]);
            assertEquals(blocks, s[4]);
            for (int i = 0; i < 4; i++) {
                assertTrue(s[i] <= s[i + 1], "runs are in order");
            }
            assertEquals(s[2], s[3], "weight 0");
        }
    }

    @Test
    void everyShardNeedsTheSameWorkersAndK() {
        final SwitchAddress a = new SwitchAddress("127.0.0.1", List.of(1));
        assertThrows(
                IllegalArgumentException.class,
                () -> new ShardedJob(List.of(
                        new ShardedJob.Part(a, new JobSpec(7, 0, 64, 8, WORKERS), 1),
                        new ShardedJob.Part(a, new JobSpec(7, 0, 32, 8, WORKERS), 1))));
        assertThrows(
                IllegalArgumentException.class,
                () -> new ShardedJob(List.of(
                        new ShardedJob.Part(a, new JobSpec(7, 0, 64, 8, WORKERS), 1),
                        new ShardedJob.Part(a, new JobSpec(7, 0, 64, 8, WORKERS.subList(0, 1)), 1))));
        assertThrows(IllegalArgumentException.class, () -> job(0, 0), "weights that add up to nothing");
        assertThrows(IllegalArgumentException.class, () -> job(1, -1));
    }

    /**
     * Per-link load, in vectors, with the weights: a data host sends its parts to every other shard and its
     * shard's results to every other worker; an extra host receives every worker's part and sends every result.
     */
    @ParameterizedTest(name = "n={0} extra={1}")
    @CsvSource({"4,0,1.5", "4,2,1.2", "4,4,1.0", "8,1,1.6", "8,0,1.75", "2,1,1.0", "2,2,1.0", "6,3,1.25"})
    void theWeightsGiveEveryLinkTheBoundOfTheBestSplit(final int n, final int extra, final double bound) {
        final int[] w = ShardedJob.linkBalancedWeights(n, extra);
        double total = 0;
        for (final int x : w) {
            total += x;
        }
        final double y = w[0] / total;
        final double x = extra == 0 ? 0 : w[n] / total;
        final double dataLink = extra * x + 2 * (n - 1) * y;
        final double extraLink = n * x;
        assertEquals(bound, dataLink, 1e-5, "data host link");
        if (extra > 0) {
            assertEquals(bound, extraLink, 1e-5, "extra host link");
        }
        assertEquals(2.0 * n * (n - 1) / (n * n + extra * n - 2.0 * extra), bound, 1e-6, "the formula");
    }

    @Test
    void moreExtraHostsThanDataHostsShareTheVectorAlone() {
        final int[] w = ShardedJob.linkBalancedWeights(2, 3);
        assertEquals(0, w[0]);
        assertEquals(0, w[1]);
        assertEquals(w[2], w[3]);
        assertEquals(w[3], w[4]);
    }

    @Test
    void poolsFollowTheWeightsWithAFloor() {
        assertArrayEquals(new int[] {4, 4, 4, 4}, ShardedJob.pools(16, new int[] {1, 1, 1, 1}, 2));
        assertArrayEquals(new int[] {4, 4, 8}, ShardedJob.pools(16, new int[] {1, 1, 2}, 4));
        assertArrayEquals(new int[] {4, 4, 16}, ShardedJob.pools(16, new int[] {0, 0, 1}, 4));
    }
}

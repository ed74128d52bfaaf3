package org.switchml.spark.driver;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.protocol.Wire;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;

/** The pre-launch rules and the stage plan as pure functions (no cluster needed). */
@Timeout(60)
class StageLauncherRulesTest {
    private static final TaskSettings AUTO = new TaskSettings(7, 0, 4, 0, 0, true, 10_000, 60_000, 100);

    private static SparkConf conf(final String master, final boolean dynamicAllocation) {
        return new SparkConf(false)
                .setMaster(master)
                .set(StageLauncher.DYNAMIC_ALLOCATION, Boolean.toString(dynamicAllocation));
    }

    @Test
    void barrierStagesAreRefusedWhereSparkRefusesThemUnderDynamicAllocation() {
        // Spark's rule: dynamic allocation is in effect on any master but local and local[...].
        assertTrue(StageLauncher.barrierStagesRefused(conf("local-cluster[2,1,1024]", true)));
        assertTrue(StageLauncher.barrierStagesRefused(conf("spark://m:7077", true)));
        assertTrue(
                StageLauncher.barrierStagesRefused(conf("yarn", true)
                        .set("spark.dynamicAllocation.minExecutors", "2")
                        .set("spark.dynamicAllocation.maxExecutors", "2")),
                "a fixed executor count under dynamic allocation is refused as well");
        assertFalse(StageLauncher.barrierStagesRefused(conf("yarn", false)));
        assertFalse(
                StageLauncher.barrierStagesRefused(conf("local[2]", true)), "a local master has no dynamic allocation");
        assertTrue(StageLauncher.barrierStagesRefused(
                conf("local[2]", true).set("spark.dynamicAllocation.testing", "true")));

        final IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> StageLauncher.checkCluster(conf("spark://m:7077", true)));
        assertTrue(
                e.getMessage().contains("spark.dynamicAllocation.enabled=true")
                        && e.getMessage().contains("spark.dynamicAllocation.enabled=false"),
                e.getMessage());
        assertDoesNotThrow(() -> StageLauncher.checkCluster(conf("local[2]", true)));
    }

    @Test
    void expectedSlotsComeFromTheMasterOrTheExecutorSettings() {
        assertEquals(4, StageLauncher.expectedSlots("local-cluster[2,2,1024]", "", "", 1));
        assertEquals(2, StageLauncher.expectedSlots("local-cluster[2, 2, 1024]", "", "", 2));
        assertEquals(12, StageLauncher.expectedSlots("spark://m:7077", "3", "4", 1));
        assertEquals(0, StageLauncher.expectedSlots("spark://m:7077", "", "", 1));
    }

    @Test
    void aClusterMasterWithoutThePluginIsAnErrorNamingSparkPlugins() {
        final IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> DriverRuntimes.requirePluginUnlessLocal(false, "yarn"));
        assertTrue(
                e.getMessage().contains("spark.plugins=org.switchml.spark.SwitchMLPlugin")
                        && e.getMessage().contains("yarn"),
                e.getMessage());
        assertDoesNotThrow(() -> DriverRuntimes.requirePluginUnlessLocal(true, "local[2]"));
    }

    private static Rendezvous.Hello hello(final int task, final String executor, final int mtu) {
        return new Rendezvous.Hello(
                "7.0", task, executor, "127.0.0." + (executor.hashCode() & 7) + ":" + (5000 + executor.length()), mtu);
    }

    @Test
    void executorsAreTheWorkersRankedByTheirLowestTask() {
        final Rendezvous.Hello[] h = {
            hello(0, "2", 65536), hello(1, "1", 65536), hello(2, "2", 65536), hello(3, "1", 65536)
        };
        final Rendezvous.Plan p = StagePlans.make("127.0.0.1:1", AUTO, h, new String[8], 0, 0);
        assertEquals(2, p.workers());
        assertArrayEquals(new int[] {0, 1, 0, 1}, p.rankOfTask());
        assertArrayEquals(new int[] {0, 0, 1, 1}, p.localIndex());
        assertArrayEquals(new int[] {2, 2}, p.localCount());
        // No cache: two source partitions per task, each task its share.
        for (final int[] parts : p.partitions()) {
            assertEquals(2, parts.length);
        }
    }

    @Test
    void cachedPartitionsGoToTheirExecutorWithinAFairShare() {
        final Rendezvous.Hello[] h = {hello(0, "a", 0), hello(1, "b", 0)};
        // Five partitions cached on a, one on b: a's task takes its share (3), the rest go to b.
        final String[] pref = {"a", "a", "a", "a", "a", "b"};
        final Rendezvous.Plan p = StagePlans.make("127.0.0.1:1", AUTO, h, pref, 0, 0);
        assertArrayEquals(new int[] {0, 1, 2}, p.partitions()[0]);
        assertArrayEquals(new int[] {3, 4, 5}, p.partitions()[1]);
        final int[] all = Arrays.stream(p.partitions())
                .flatMapToInt(Arrays::stream)
                .sorted()
                .toArray();
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5}, all);
    }

    @Test
    void kFollowsTheMtuTheSwitchKindOrTheSetting() {
        assertEquals(4096, StagePlans.chooseK(AUTO, 0, 65536), "loopback: the software switch's best k");
        final int k1500 = StagePlans.chooseK(AUTO, 0, 1500);
        assertTrue(28 + Wire.datagramLength(k1500) <= 1500 && k1500 % 2 == 0, "k=" + k1500);
        assertTrue(Wire.datagramLength(k1500 + 2) + 28 > 1500, "k=" + k1500 + " is the largest even fit");
        assertEquals(64, StagePlans.chooseK(AUTO, 64, 65536), "a P4 target gets 64");
        final TaskSettings set = new TaskSettings(7, 0, 4, 256, 0, true, 10_000, 60_000, 100);
        assertEquals(256, StagePlans.chooseK(set, 64, 1500), "spark.switchml.k overrides");
        assertEquals(StagePlans.chooseK(AUTO, 0, 1500), StagePlans.chooseK(AUTO, 0, 0), "unknown MTU: 1500");
        assertEquals(8, StagePlans.autoPool(4096));
        assertEquals(128, StagePlans.autoPool(64));
    }

    @Test
    void moreExecutorsThanASwitchJobHasWorkersIsAClearError() {
        final Rendezvous.Hello[] h = new Rendezvous.Hello[Wire.MAX_WORKERS + 1];
        for (int t = 0; t < h.length; t++) {
            h[t] = new Rendezvous.Hello("7.0", t, "e" + t, "127.0.0.1:" + (6000 + t), 0);
        }
        final IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> StagePlans.make("127.0.0.1:1", AUTO, h, new String[h.length], 0, 0));
        assertTrue(e.getMessage().contains("257 executors") && e.getMessage().contains("at most 256"), e.getMessage());
    }
}

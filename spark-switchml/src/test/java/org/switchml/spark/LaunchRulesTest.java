package org.switchml.spark;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pre-launch rules and their messages, including the cluster-only ones (no cluster needed). */
class LaunchRulesTest {
    @Test
    void dynamicAllocationIsRejectedOnAClusterOnly() {
        final IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Launch.check(4, 8, false, true, "spark://m:7077", "1", 0));
        assertTrue(e.getMessage().contains("spark.dynamicAllocation.enabled=true"), e.getMessage());
        assertDoesNotThrow(() -> Launch.check(4, 8, true, true, "local[8]", "1", 0));
    }

    @Test
    void tooFewSlotsOnAClusterNamesTheNumbersAndTheWait() {
        final IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Launch.check(6, 4, false, false, "spark://m:7077", "2", 60_000));
        assertTrue(e.getMessage().contains("needs 6 task slots") && e.getMessage().contains("only 4")
                && e.getMessage().contains("spark.task.cpus=2") && e.getMessage().contains("waited 60000 ms"),
                e.getMessage());
    }

    @Test
    void aClusterMasterWithoutThePluginIsAnErrorNamingSparkPlugins() {
        final IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DriverRuntime.requirePluginUnlessLocal(false, "yarn"));
        assertTrue(e.getMessage().contains("spark.plugins=org.switchml.spark.SwitchMLPlugin")
                && e.getMessage().contains("yarn"), e.getMessage());
        assertDoesNotThrow(() -> DriverRuntime.requirePluginUnlessLocal(true, "local[2]"));
    }
}

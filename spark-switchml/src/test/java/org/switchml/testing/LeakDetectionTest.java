package org.switchml.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The leak check itself: the tests run at PARANOID, and a leaked buffer is caught and fails. */
class LeakDetectionTest {
    @Test
    void testsRunAtParanoid() {
        assertEquals(
                ResourceLeakDetector.Level.PARANOID,
                LeakDetection.level(),
                "surefire must set -Dio.netty.leakDetection.level=paranoid");
    }

    @Test
    void aLeakedBufferIsReportedAndFails() {
        LeakDetection.collect(); // start clean
        leak();
        final AssertionError e = assertThrows(AssertionError.class, () -> LeakDetection.check("the deliberate leak"));
        System.out.println("[leak] " + e.getMessage().lines().findFirst().orElse(""));
        assertTrue(e.getMessage().contains("ByteBuf leaked"), e.getMessage());
        assertTrue(
                e.getMessage().contains("leakOneBuffer"), "PARANOID records where it was allocated: " + e.getMessage());
        assertEquals(List.of(), LeakDetection.collect(), "reported once");
    }

    @Test
    void aReleasedBufferIsNot() {
        LeakDetection.collect();
        final ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(1);
        b.release();
        assertEquals(List.of(), LeakDetection.collect());
    }

    private static void leak() {
        leakOneBuffer();
    }

    private static void leakOneBuffer() {
        final ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeInt(42); // never released
    }
}

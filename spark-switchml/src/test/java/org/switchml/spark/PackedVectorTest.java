package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.switchml.spark.messages.PackedVector;
import org.switchml.testing.Seeds;

class PackedVectorTest {

    private static byte[] write(final PackedVector v) throws IOException {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(v);
        }
        return bytes.toByteArray();
    }

    private static double[] read(final byte[] b) throws IOException, ClassNotFoundException {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(b))) {
            return ((PackedVector) in.readObject()).values();
        }
    }

    private static void assertBits(final double[] expected, final double[] actual) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(
                    Double.doubleToRawLongBits(expected[i]), Double.doubleToRawLongBits(actual[i]), "element " + i);
        }
    }

    @Test
    void roundTripsEveryBitAndPacksZeros() throws Exception {
        final long seed = Seeds.seed("PackedVectorTest", 20261201L);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] v = new double[1_000_003];
        for (int i = 0; i < 1_000; i++) {
            v[rnd.nextInt(v.length)] = rnd.nextDouble(-1, 1);
        }
        v[0] = -0.0;
        v[1] = Double.longBitsToDouble(0x7ff8_0000_0000_1234L); // a NaN with a payload
        v[v.length - 1] = Double.MIN_VALUE;
        final byte[] bytes = write(new PackedVector(v));
        assertTrue(bytes.length < 40_000, "a mostly-zero vector packs: " + bytes.length + " bytes");
        assertBits(v, read(bytes));
        for (final double[] edge : new double[][] {{}, new double[17], {1, 2, 3}, {0, 1, 0, 0, 2, 0}}) {
            assertBits(edge, read(write(new PackedVector(edge))));
        }
    }

    @Test
    void aRunPastTheEndIsRejected() throws Exception {
        final byte[] bytes = write(new PackedVector(new double[] {0, 0, 1.5}));
        // the run (2 zeros, 1 value): claim 3 values instead
        final byte[] run = {0, 0, 0, 2, 0, 0, 0, 1};
        int at = -1;
        for (int i = 0; i + run.length <= bytes.length && at < 0; i++) {
            if (Arrays.equals(bytes, i, i + run.length, run, 0, run.length)) {
                at = i;
            }
        }
        assertTrue(at > 0, "the run is in the stream");
        bytes[at + 7] = 3;
        final InvalidObjectException e = assertThrows(InvalidObjectException.class, () -> read(bytes));
        assertTrue(e.getMessage().contains("does not fit its length 3"), e.getMessage());
    }
}

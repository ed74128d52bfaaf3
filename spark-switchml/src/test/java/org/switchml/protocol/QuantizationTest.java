package org.switchml.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.testing.ExactSum;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.Vectors;

/** The quantization edge cases: headroom, zeros, subnormals, extremes, bad input, fp64 precision. */
class QuantizationTest {

    @Test
    void headroomLeavesNoRoomForOverflow() {
        for (int n = 1; n <= Wire.MAX_WORKERS; n++) {
            final int b = Quantization.scaleBits(n);
            assertTrue((long) n << b <= Integer.MAX_VALUE, "n=" + n);
            assertTrue((long) n << (b + 1) > Integer.MAX_VALUE, "n=" + n + " wastes a bit");
        }
        assertEquals(30, Quantization.scaleBits(1));
        assertEquals(29, Quantization.scaleBits(2));
        assertEquals(25, Quantization.scaleBits(32));
        assertEquals(22, Quantization.scaleBits(256), "every rank of the 8-bit field: 256 * 2^22 = 2^30 fits");
        assertThrows(IllegalArgumentException.class, () -> Quantization.scaleBits(Wire.MAX_WORKERS + 1));
    }

    @Test
    void exponentIsTheSmallestStrictUpperPowerOfTwo() {
        assertEquals(Wire.EXPONENT_NONE, Quantization.exponentOf(0.0));
        assertEquals(1, Quantization.exponentOf(1.0));
        assertEquals(1, Quantization.exponentOf(1.5));
        assertEquals(0, Quantization.exponentOf(0.75));
        assertEquals(1024, Quantization.exponentOf(Double.MAX_VALUE));
        assertEquals(128, Quantization.exponentOf(Float.MAX_VALUE));
        assertEquals(-1073, Quantization.exponentOf(Double.MIN_VALUE));
        assertEquals(-1021, Quantization.exponentOf(Double.MIN_NORMAL));
        assertEquals(-1022, Quantization.exponentOf(Math.nextDown(Double.MIN_NORMAL)));
        assertEquals(-148, Quantization.exponentOf(Float.MIN_VALUE));
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("exponents", 1));
        for (int i = 0; i < 100_000; i++) {
            final double m = Double.longBitsToDouble(rnd.nextLong(1, Double.doubleToLongBits(Double.MAX_VALUE)));
            final int e = Quantization.exponentOf(m);
            assertTrue(Math.scalb(1.0, e) > m || e == 1024, "2^e > m for " + m);
            assertTrue(Math.scalb(1.0, e - 1) <= m, "2^(e-1) <= m for " + m);
        }
    }

    /** |q| <= 2^B for every value of a block, at any scale, so the n-way sum never overflows. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 7, 32})
    void quantizedValuesStayWithinHeadroom(final int n) {
        final int b = Quantization.scaleBits(n);
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("headroom n=" + n, n));
        final double[] extremes = {
            Double.MAX_VALUE,
            -Double.MAX_VALUE,
            Float.MAX_VALUE,
            Double.MIN_VALUE,
            Double.MIN_NORMAL,
            Math.nextDown(1.0),
            1.0,
            Math.nextDown(Double.MIN_NORMAL)
        };
        for (final double x : extremes) {
            final short e = Quantization.exponentOf(Math.abs(x));
            final long q = Quantization.quantize32(x, Quantization.shift32(e, b));
            assertTrue(Math.abs(q) <= 1L << b, x + " -> " + q);
            final long q64 = Quantization.quantize64(x, Quantization.shift64(e, b));
            assertTrue(Math.abs(Quantization.high(q64, b)) <= 1L << b);
            assertTrue(Math.abs(Quantization.low(q64, b)) <= 1L << b);
            assertEquals(
                    x,
                    Quantization.dequantize64(Quantization.high(q64, b), Quantization.low(q64, b), e, b),
                    Math.ulp(x),
                    "fp64 round trip of " + x);
        }
        for (int i = 0; i < 100_000; i++) {
            final double max = Math.scalb(1 + rnd.nextDouble(), rnd.nextInt(-1070, 1023));
            final double x = max * (rnd.nextBoolean() ? 1 : -1) * rnd.nextDouble();
            final short e = Quantization.exponentOf(max);
            final int q = Quantization.quantize32(x, Quantization.shift32(e, b));
            assertTrue(Math.abs((long) q) <= 1L << b);
            final long big = Quantization.quantize32(max, Quantization.shift32(e, b));
            assertTrue(big <= 1L << b);
        }
    }

    @Test
    void fp64KeepsAtLeast50BitsRelativeToTheBlockMaximum() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("fp64 bits", 3));
        for (final int n : new int[] {1, 2, 32}) {
            final int b = Quantization.scaleBits(n);
            for (int i = 0; i < 50_000; i++) {
                final double max = Math.scalb(1.0, rnd.nextInt(-1000, 1000));
                final double x = (rnd.nextDouble() * 2 - 1) * max;
                final short e = Quantization.exponentOf(max);
                final long q = Quantization.quantize64(x, Quantization.shift64(e, b));
                final double back = Quantization.dequantize64(Quantization.high(q, b), Quantization.low(q, b), e, b);
                assertTrue(Math.abs(back - x) <= Math.scalb(max, -50), "n=" + n + " x=" + x + " back=" + back);
            }
        }
    }

    /**
     * The tests' {@link Reference}, built from this package's functions, against {@link ExactSum}, which
     * works the documented rule out in exact decimal arithmetic: bit for bit, over blocks of ordinary,
     * zero, subnormal and near-maximum values.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 7, 32})
    void referenceEqualsExactDecimalArithmetic(final int n) {
        final int k = 64;
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("exact oracle n=" + n, 17L * n));
        final double[][] in = new double[n][];
        for (int r = 0; r < n; r++) {
            in[r] = Vectors.mixed(rnd, 6 * k + 5);
            for (int i = 0; i < k; i++) {
                in[r][i] = Double.longBitsToDouble(rnd.nextLong(1, 1L << 52)) * (rnd.nextBoolean() ? 1 : -1);
                in[r][k + i] = Double.MAX_VALUE / n * rnd.nextDouble(0.5, 1.0);
                in[r][2 * k + i] = i % 2 == 0 ? 0.0 : -0.0;
            }
        }
        assertArrayEquals(ExactSum.fp32(in, k), Reference.fp32(in, k), 0.0, "FP32_BLOCK, n=" + n);
        assertArrayEquals(ExactSum.fp64(in, k), Reference.fp64(in, k), 0.0, "FP64_SPLIT, n=" + n);
    }

    @Test
    void allZeroBlocksAndSubnormalsSurvive() {
        final float[] in = new float[130];
        in[64] = Float.MIN_VALUE;
        in[65] = -3 * Float.MIN_VALUE;
        final float[] out = new float[130];
        final VectorCodec codec = VectorCodec.forFloats(in, out, 64, 2);
        assertEquals(3, codec.blocks());
        assertEquals(Wire.EXPONENT_NONE, codec.localExponent(0));
        assertEquals(Quantization.exponentOf(3 * (double) Float.MIN_VALUE), codec.localExponent(1));
        final ByteBuf buf = Unpooled.buffer(4 * 64);
        for (int block = 0; block < 3; block++) {
            final short e = codec.localExponent(block);
            codec.encode(block, e, buf, 0);
            codec.decode(block, e, buf, 0); // a single worker's "sum"
        }
        assertEquals(0f, out[0]);
        assertEquals(Float.MIN_VALUE, out[64]);
        assertEquals(-3 * Float.MIN_VALUE, out[65]);
        assertTrue(Float.isFinite(out[129]));
    }

    @Test
    void nanAndInfinityAreRejectedNamingTheFirstBadIndex() {
        final float[] f = new float[300];
        f[200] = Float.POSITIVE_INFINITY;
        f[250] = Float.NaN;
        final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> VectorCodec.forFloats(f, new float[300], 64, 2));
        assertTrue(e.getMessage().contains("element 200"), e.getMessage());
        final double[] d = new double[10];
        d[3] = Double.NaN;
        final IllegalArgumentException e2 = assertThrows(
                IllegalArgumentException.class, () -> VectorCodec.forDoubles(d, new double[10], 64, 2, true));
        assertTrue(e2.getMessage().contains("element 3"), e2.getMessage());
        assertThrows(IllegalArgumentException.class, () -> VectorCodec.forFloats(f, new float[3], 64, 2));
        assertThrows(IllegalArgumentException.class, () -> VectorCodec.forDoubles(d, new double[10], 63, 2, true));
    }

    @Test
    void extremesSumWithoutOverflowAndStayFinite() {
        // n workers each at Double.MAX_VALUE / n: the exact sum is Double.MAX_VALUE. The quantized sum
        // fits int32, and rounding that lifts it to 2^1024 saturates instead of giving infinity.
        for (final int n : new int[] {1, 2, 4, 32}) {
            final int b = Quantization.scaleBits(n);
            final double x = Math.scalb(Double.MAX_VALUE, -Integer.numberOfTrailingZeros(n));
            final short e = Quantization.exponentOf(x);
            final long sum = n * (long) Quantization.quantize32(x, Quantization.shift32(e, b));
            assertTrue(sum <= Integer.MAX_VALUE, "n=" + n);
            final double back = Quantization.dequantize32((int) sum, e, b);
            assertEquals(Double.MAX_VALUE, back, Quantization.errorBound(Encoding.FP32_BLOCK, n, e), "n=" + n);
            final long q = Quantization.quantize64(x, Quantization.shift64(e, b));
            final double back64 =
                    Quantization.dequantize64(n * Quantization.high(q, b), n * Quantization.low(q, b), e, b);
            assertEquals(Double.MAX_VALUE, back64, Math.ulp(Double.MAX_VALUE), "fp64 n=" + n);
        }
    }
}

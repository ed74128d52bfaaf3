package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.switchml.protocol.Quantization;
import org.switchml.protocol.VectorCodec;
import org.switchml.testing.ExactSum;

/**
 * The benchmark's reference agrees with the library's codec path (encode, integer sum, decode) and with
 * exact decimal arithmetic that shares no code with the library, and its checks reject results that are
 * off by one bit or beyond the bound.
 */
class ReferenceSumTest {
    private static final int K = 64;

    /** What a switch computes, without a network: the library codecs plus an int32 sum per lane. */
    private static Object simulate(final BenchVectors v, final int k) {
        final int n = v.n;
        final VectorCodec[] codecs = new VectorCodec[n];
        final Object[] outs = new Object[n];
        for (int r = 0; r < n; r++) {
            if (v.fp64) {
                final double[] out = new double[v.length];
                outs[r] = out;
                codecs[r] = VectorCodec.forDoubles(v.doubles[r], out, k, n, true);
            } else {
                final float[] out = new float[v.length];
                outs[r] = out;
                codecs[r] = VectorCodec.forFloats(v.floats[r], out, k, n);
            }
        }
        final ByteBuf buf = Unpooled.buffer(4 * k);
        final ByteBuf sum = Unpooled.buffer(4 * k);
        for (int c = 0; c < codecs[0].blocks(); c++) {
            short e = Short.MIN_VALUE;
            for (final VectorCodec codec : codecs) {
                e = Quantization.maxExponent(e, codec.localExponent(c));
            }
            sum.setZero(0, 4 * k);
            for (final VectorCodec codec : codecs) {
                codec.encode(c, e, buf, 0);
                for (int i = 0; i < k; i++) {
                    sum.setInt(4 * i, sum.getInt(4 * i) + buf.getInt(4 * i));
                }
            }
            codecs[0].decode(c, e, sum, 0);
        }
        return outs[0];
    }

    @ParameterizedTest
    @EnumSource(Values.class)
    void referenceMatchesTheCodecPathForFloats(final Values values) throws Exception {
        for (final int n : new int[] {1, 3, 8, 32}) {
            final BenchVectors v = BenchVectors.generate(values, n, 5 * K + 7, false, 42 + n);
            final ReferenceSum ref = ReferenceSum.of(v, K);
            final float[] got = (float[]) simulate(v, K);
            assertDoesNotThrow(() -> ref.checkResult(0, got), values + " n=" + n);
            assertTrue(ref.checkBound(v) <= 1.0 + 0x1p-40);
        }
    }

    @ParameterizedTest
    @EnumSource(Values.class)
    void referenceMatchesTheCodecPathForFp64(final Values values) throws Exception {
        for (final int n : new int[] {1, 2, 5, 32}) {
            final BenchVectors v = BenchVectors.generate(values, n, 5 * K + 7, true, 7 + n);
            final ReferenceSum ref = ReferenceSum.of(v, K);
            final double[] got = (double[]) simulate(v, K);
            assertDoesNotThrow(() -> ref.checkResult(0, got), values + " n=" + n);
            assertTrue(ref.checkBound(v) <= 1.0 + 0x1p-40);
        }
    }

    /** The exact decimal oracle of docs/protocol.md section 5 ({@link ExactSum}), which shares no code with the library. */
    private static double[] exactSum(final BenchVectors v, final int k) {
        final double[][] rows = new double[v.n][v.length];
        for (int r = 0; r < v.n; r++) {
            for (int i = 0; i < v.length; i++) {
                rows[r][i] = v.at(r, i);
            }
        }
        return v.fp64 ? ExactSum.fp64(rows, k) : ExactSum.fp32(rows, k);
    }

    @ParameterizedTest
    @EnumSource(Values.class)
    void referenceMatchesExactDecimalArithmetic(final Values values) throws Exception {
        for (final boolean fp64 : new boolean[] {false, true}) {
            for (final int n : new int[] {1, 3, 32}) {
                final BenchVectors v = BenchVectors.generate(values, n, 5 * K + 7, fp64, 90 + n);
                final ReferenceSum ref = ReferenceSum.of(v, K);
                final double[] exact = exactSum(v, K);
                final String what = values + " n=" + n + " fp64=" + fp64;
                if (fp64) {
                    assertDoesNotThrow(() -> ref.checkResult(0, exact), what);
                } else {
                    assertDoesNotThrow(() -> ref.checkResult(0, toFloats(exact)), what);
                }
            }
        }
    }

    private static float[] toFloats(final double[] d) {
        final float[] f = new float[d.length];
        for (int i = 0; i < d.length; i++) {
            f[i] = (float) d[i];
        }
        return f;
    }

    @Test
    void oneBitOffIsAMismatchNamingRankAndElement() {
        final BenchVectors v = BenchVectors.generate(Values.GAUSSIAN, 4, 1000, false, 1);
        final ReferenceSum ref = ReferenceSum.of(v, K);
        final float[] got = (float[]) simulate(v, K);
        got[321] = Math.nextUp(got[321]);
        final ReferenceSum.Mismatch m = assertThrows(ReferenceSum.Mismatch.class, () -> ref.checkResult(2, got));
        assertTrue(m.getMessage().contains("rank 2") && m.getMessage().contains("element 321"), m.getMessage());
    }

    @Test
    void resultsBeyondTheBoundAreRejected() throws Exception {
        final SplittableRandom rnd = new SplittableRandom(3);
        for (final boolean fp64 : new boolean[] {false, true}) {
            for (final Values values : new Values[] {Values.GAUSSIAN, Values.TINY, Values.HUGE}) {
                final BenchVectors v = BenchVectors.generate(values, 3, 300, fp64, rnd.nextLong());
                final ReferenceSum ref = ReferenceSum.of(v, K);
                final double[] wrong = fp64 ? ((double[]) simulate(v, K)).clone() : toDoubles((float[]) simulate(v, K));
                assertDoesNotThrow(() -> ref.checkBound(v, wrong));
                // n + 2 quantization steps plus 4 ulps off: beyond the bound of n/2 steps plus half an ulp.
                final int b = Quantization.scaleBits(v.n);
                final double step = Math.scalb(1.0, Quantization.exponentOf(maxAbs(v, 0, K)) - (fp64 ? 2 * b + 1 : b));
                final double ulp = fp64 ? Math.ulp(wrong[5]) : Math.ulp((float) wrong[5]);
                wrong[5] = wrong[5] + (v.n + 2) * step + 4 * ulp;
                if (!fp64) {
                    wrong[5] = (float) wrong[5];
                }
                assertThrows(ReferenceSum.Mismatch.class, () -> ref.checkBound(v, wrong), values + " fp64=" + fp64);
            }
        }
    }

    private static double maxAbs(final BenchVectors v, final int from, final int to) {
        double m = 0;
        for (int r = 0; r < v.n; r++) {
            for (int i = from; i < Math.min(to, v.length); i++) {
                m = Math.max(m, Math.abs(v.at(r, i)));
            }
        }
        return m;
    }

    private static double[] toDoubles(final float[] f) {
        final double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = f[i];
        }
        return d;
    }

    @Test
    void zerosSumToPositiveZero() throws Exception {
        final BenchVectors v = BenchVectors.generate(Values.ZEROS, 3, 200, false, 5);
        final float[] got = (float[]) simulate(v, K);
        assertArrayEquals(new float[200], got);
        ReferenceSum.of(v, K).checkResult(1, got);
    }
}

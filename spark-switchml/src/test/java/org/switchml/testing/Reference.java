package org.switchml.testing;

import org.switchml.protocol.Encoding;
import org.switchml.protocol.Quantization;
import org.switchml.protocol.Wire;

/**
 * The documented rule, computed independently of the transport: per block the maximum of the
 * workers' exponents, each worker's quantized integers, their exact integer sum, dequantized.
 */
public final class Reference {
    private Reference() {}

    /** Global exponent of every block. */
    public static short[] globalExponents(final double[][] in, final int perBlock) {
        final int len = in[0].length;
        final int blocks = (len + perBlock - 1) / perBlock;
        final short[] e = new short[blocks];
        for (int c = 0; c < blocks; c++) {
            short max = Wire.EXPONENT_NONE;
            for (final double[] w : in) {
                double m = 0;
                for (int i = c * perBlock; i < Math.min(len, (c + 1) * perBlock); i++) {
                    m = Math.max(m, Math.abs(w[i]));
                }
                max = Quantization.maxExponent(max, Quantization.exponentOf(m));
            }
            e[c] = max;
        }
        return e;
    }

    /** The expected result for FP32_BLOCK (double output). */
    public static double[] fp32(final double[][] in, final int k) {
        final int n = in.length;
        final int b = Quantization.scaleBits(n);
        final short[] e = globalExponents(in, k);
        final double[] out = new double[in[0].length];
        for (int i = 0; i < out.length; i++) {
            final short ei = e[i / k];
            final int shift = Quantization.shift32(ei, b);
            long sum = 0;
            for (final double[] w : in) {
                sum += Quantization.quantize32(w[i], shift);
            }
            if (sum != (int) sum) {
                throw new AssertionError("quantized sum overflows int32 at " + i + ": " + sum);
            }
            out[i] = Quantization.dequantize32((int) sum, ei, b);
        }
        return out;
    }

    /** The expected result for FP64_SPLIT. */
    public static double[] fp64(final double[][] in, final int k) {
        final int n = in.length;
        final int b = Quantization.scaleBits(n);
        final int perBlock = k / 2;
        final short[] e = globalExponents(in, perBlock);
        final double[] out = new double[in[0].length];
        for (int i = 0; i < out.length; i++) {
            final short ei = e[i / perBlock];
            final int shift = Quantization.shift64(ei, b);
            long hi = 0;
            long lo = 0;
            for (final double[] w : in) {
                final long q = Quantization.quantize64(w[i], shift);
                hi += Quantization.high(q, b);
                lo += Quantization.low(q, b);
            }
            if (hi != (int) hi || lo != (int) lo) {
                throw new AssertionError("lane sum overflows int32 at " + i);
            }
            out[i] = Quantization.dequantize64((int) hi, (int) lo, ei, b);
        }
        return out;
    }

    /**
     * Checks {@code actual} against the exact real sum within the documented bound; returns the largest
     * error seen relative to the bound (&lt;= 1 passes).
     */
    public static double worstBoundRatio(
            final double[][] in, final double[] actual, final Encoding enc, final int k, final boolean floatOutput) {
        final int n = in.length;
        final int perBlock = enc.elementsPerPacket(k);
        final short[] e = globalExponents(in, perBlock);
        double worst = 0;
        for (int i = 0; i < actual.length; i++) {
            // Exact sum as an unevaluated double-double (TwoSum): error ~2^-106, far below any bound here.
            double s = 0;
            double c = 0;
            for (final double[] w : in) {
                final double t = s + w[i];
                final double bp = t - s;
                c += (s - (t - bp)) + (w[i] - bp);
                s = t;
            }
            final double exact = s + c;
            final double err = Math.abs(actual[i] - s - c);
            final double half = floatOutput ? Math.ulp((float) actual[i]) / 2 : Math.ulp(actual[i]) / 2;
            final double bound = Quantization.errorBound(enc, n, e[i / perBlock])
                    + half
                    + Math.ulp(exact); // the double-double's own rounding
            worst = Math.max(worst, bound == 0 ? (err == 0 ? 0 : Double.POSITIVE_INFINITY) : err / bound);
        }
        return worst;
    }
}

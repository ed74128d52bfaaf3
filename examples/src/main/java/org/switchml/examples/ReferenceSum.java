package org.switchml.examples;

import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.Quantization;
import org.switchml.protocol.Wire;

/**
 * The documented result of an allreduce (docs/protocol.md, section 5), computed without any transport:
 * per block the maximum of the workers' local exponents, every worker's quantized integers, their exact
 * integer sum, dequantized. Also checks that result against the exact real sum and the documented bound.
 */
final class ReferenceSum {
    private final Encoding encoding;
    private final int n;
    private final int perBlock;
    private final short[] exponents;
    /** Expected result in double precision (a float[] result is this rounded to float). */
    private final double[] expected;
    /** First element whose integer sum does not fit int32 (the headroom rule broken), or -1. */
    private final int overflowAt;

    private ReferenceSum(
            final Encoding encoding,
            final int n,
            final int perBlock,
            final short[] exponents,
            final double[] expected,
            final int overflowAt) {
        this.encoding = encoding;
        this.n = n;
        this.perBlock = perBlock;
        this.exponents = exponents;
        this.expected = expected;
        this.overflowAt = overflowAt;
    }

    /** The expected result for {@code in} aggregated with {@code k} int32 lanes per packet. */
    static ReferenceSum of(final BenchVectors in, final int k) {
        final Encoding enc = in.fp64 ? Encoding.FP64_SPLIT : Encoding.FP32_BLOCK;
        final int n = in.n;
        final int b = Quantization.scaleBits(n);
        final int perBlock = enc.elementsPerPacket(k);
        final int blocks = (in.length + perBlock - 1) / perBlock;
        final short[] e = new short[blocks];
        final double[] out = new double[in.length];
        int overflowAt = -1;
        for (int c = 0; c < blocks; c++) {
            final int start = c * perBlock;
            final int end = Math.min(in.length, start + perBlock);
            short global = Wire.EXPONENT_NONE;
            for (int r = 0; r < n; r++) {
                double max = 0;
                for (int i = start; i < end; i++) {
                    max = Math.max(max, Math.abs(in.at(r, i)));
                }
                global = Quantization.maxExponent(global, Quantization.exponentOf(max));
            }
            e[c] = global;
            for (int i = start; i < end; i++) {
                if (enc == Encoding.FP32_BLOCK) {
                    final int shift = Quantization.shift32(global, b);
                    long sum = 0;
                    for (int r = 0; r < n; r++) {
                        sum += Quantization.quantize32(in.at(r, i), shift);
                    }
                    if (sum != (int) sum && overflowAt < 0) {
                        overflowAt = i;
                    }
                    out[i] = Quantization.dequantize32((int) sum, global, b);
                } else {
                    final int shift = Quantization.shift64(global, b);
                    long hi = 0;
                    long lo = 0;
                    for (int r = 0; r < n; r++) {
                        final long q = Quantization.quantize64(in.at(r, i), shift);
                        hi += Quantization.high(q, b);
                        lo += Quantization.low(q, b);
                    }
                    if ((hi != (int) hi || lo != (int) lo) && overflowAt < 0) {
                        overflowAt = i;
                    }
                    out[i] = Quantization.dequantize64((int) hi, (int) lo, global, b);
                }
            }
        }
        return new ReferenceSum(enc, n, perBlock, e, out, overflowAt);
    }

    /**
     * Checks that the reference result lies within the documented error bound of the exact real sum, for
     * every element. Returns the largest error as a fraction of its bound; throws {@link Mismatch} when an
     * element exceeds it or an integer sum overflowed int32.
     */
    double checkBound(final BenchVectors in) throws Mismatch {
        return checkBound(in, expected);
    }

    /** {@link #checkBound(BenchVectors)} for other values than the reference's own (tests). */
    double checkBound(final BenchVectors in, final double[] values) throws Mismatch {
        if (overflowAt >= 0) {
            throw new Mismatch("the integer sum of element " + overflowAt + " (block " + overflowAt / perBlock
                    + ") does not fit int32: the headroom rule B(n) of docs/protocol.md section 5 is broken");
        }
        final boolean floatOutput = !in.fp64;
        double worst = 0;
        int bad = 0;
        String first = null;
        for (int i = 0; i < values.length; i++) {
            final short e = exponents[i / perBlock];
            // Blocks of small magnitude are checked scaled by 2^t (exact), so no term of the bound underflows.
            final int t = e != Wire.EXPONENT_NONE && e < 0 ? -e : 0;
            // Exact sum as an unevaluated double-double s + c (TwoSum accumulation; error < n 2^-105 sum|x|).
            double s = 0;
            double c = 0;
            double abs = 0;
            for (int r = 0; r < n; r++) {
                final double x = Math.scalb(in.at(r, i), t);
                final double sum = s + x;
                final double bp = sum - s;
                c += (s - (sum - bp)) + (x - bp);
                s = sum;
                abs += Math.abs(x);
            }
            final double unscaled = floatOutput ? (float) values[i] : values[i];
            final double ulp = floatOutput ? Math.ulp((float) unscaled) : Math.ulp(unscaled);
            final double result = Math.scalb(unscaled, t);
            // |result - (s + c)|: result - s exactly by TwoSum, then the small terms.
            final double dh = result - s;
            final double bp = dh - result;
            final double dl = (result - (dh - bp)) + (-s - bp);
            final double err = Math.abs(dh + (dl - c));
            final double bound = Quantization.errorBound(encoding, n, (short) (e == Wire.EXPONENT_NONE ? e : e + t))
                    + Math.scalb(ulp, t - 1)
                    + Math.scalb(abs, -100);
            final double ratio = err == 0 ? 0 : err / bound;
            if (!(ratio <= 1.0 + 0x1p-40)) {
                if (bad++ == 0) {
                    first = "element " + i + " (block " + i / perBlock + ", exponent " + e + "): result "
                            + unscaled + " differs from the exact sum by " + Math.scalb(err, -t)
                            + ", more than the documented bound " + Math.scalb(bound, -t);
                }
            }
            worst = Math.max(worst, ratio);
        }
        if (bad > 0) {
            throw new Mismatch(first + (bad > 1 ? " (" + bad + " elements exceed the bound)" : ""));
        }
        return worst;
    }

    /** Checks one worker's float[] result bit for bit; throws {@link Mismatch} naming the first difference. */
    void checkResult(final int rank, final float[] result) throws Mismatch {
        checkBits(
                rank,
                result.length,
                i -> Float.floatToRawIntBits(result[i]) == Float.floatToRawIntBits((float) expected[i]),
                i -> result[i] + " (0x" + Integer.toHexString(Float.floatToRawIntBits(result[i]))
                        + "), the documented reference is " + (float) expected[i] + " (0x"
                        + Integer.toHexString(Float.floatToRawIntBits((float) expected[i])) + ")");
    }

    /** Checks one worker's double[] result bit for bit; throws {@link Mismatch} naming the first difference. */
    void checkResult(final int rank, final double[] result) throws Mismatch {
        checkBits(
                rank,
                result.length,
                i -> Double.doubleToRawLongBits(result[i]) == Double.doubleToRawLongBits(expected[i]),
                i -> result[i] + " (0x" + Long.toHexString(Double.doubleToRawLongBits(result[i]))
                        + "), the documented reference is " + expected[i] + " (0x"
                        + Long.toHexString(Double.doubleToRawLongBits(expected[i])) + ")");
    }

    /** The shared part of both checks: length, count of differing elements, the first one described. */
    private void checkBits(
            final int rank, final int length, final IntPredicate same, final IntFunction<String> describe)
            throws Mismatch {
        if (length != expected.length) {
            throw new Mismatch("rank " + rank + ": result has " + length + " elements, expected " + expected.length);
        }
        int bad = 0;
        int first = -1;
        for (int i = 0; i < length; i++) {
            if (!same.test(i) && bad++ == 0) {
                first = i;
            }
        }
        if (bad > 0) {
            throw new Mismatch("rank " + rank + ": element " + first + " (block " + first / perBlock + ") is "
                    + describe.apply(first) + "; " + bad + " of " + length + " elements differ");
        }
    }

    /** A result that is not the documented one. */
    static final class Mismatch extends Exception {
        private static final long serialVersionUID = 1L;

        Mismatch(final String message) {
            super(message);
        }
    }
}

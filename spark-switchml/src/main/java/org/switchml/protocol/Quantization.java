package org.switchml.protocol;

/**
 * Scalar rules of docs/protocol.md section 5: block exponents, the headroom {@code B(n)}, and the
 * quantize / dequantize functions for the FP32_BLOCK and FP64_SPLIT encodings.
 *
 * <p>Every function is deterministic and uses only correctly rounded operations, so every worker that
 * dequantizes the same integer sums with the same exponent gets bit-identical doubles.
 */
public final class Quantization {
    /** Smallest legal block exponent (2^-1073 &gt; the smallest subnormal double). */
    public static final int MIN_EXPONENT = -1073;
    /** Largest legal block exponent (2^1024 &gt; Double.MAX_VALUE). */
    public static final int MAX_EXPONENT = 1024;

    private Quantization() {}

    /**
     * Headroom bits for an {@code n}-way sum: the largest {@code b} with {@code n * 2^b <= 2^31 - 1}.
     * A value quantized to at most {@code 2^b} in magnitude can then be summed n times without overflow.
     */
    public static int scaleBits(final int n) {
        if (n < 1 || n > Wire.MAX_WORKERS) {
            throw new IllegalArgumentException("number of workers must be 1.." + Wire.MAX_WORKERS + ", got " + n);
        }
        int b = 30;
        while (((long) n << b) > Integer.MAX_VALUE) {
            b--;
        }
        return b;
    }

    /**
     * Block exponent of a block whose largest magnitude is {@code maxAbs}: {@link Wire#EXPONENT_NONE}
     * for zero, else the smallest integer {@code e} with {@code 2^e > maxAbs}.
     */
    public static short exponentOf(final double maxAbs) {
        if (maxAbs == 0.0) {
            return Wire.EXPONENT_NONE;
        }
        int floorLog2 = Math.getExponent(maxAbs);
        if (floorLog2 < Double.MIN_EXPONENT) {
            floorLog2 = Math.getExponent(maxAbs * 0x1p54) - 54; // subnormal: normalise first
        }
        return (short) (floorLog2 + 1);
    }

    /** Maximum of two exponents, NONE being the smallest value (what the switch computes). */
    public static short maxExponent(final short a, final short b) {
        return a >= b ? a : b;
    }

    /** {@code 2^shift * x} exactly rounded; fast path when 2^shift is a normal double. */
    public static double scale(final double x, final int shift) {
        return scale(x, shift, factor(shift)); // one correctly rounded multiply, same as scalb
    }

    /**
     * {@code 2^shift} when it is a normal double (then {@code x * factor(shift)} equals
     * {@link #scale scale(x, shift)} bit for bit), else NaN: callers hoist it out of per-element loops.
     */
    public static double factor(final int shift) {
        if (shift >= Double.MIN_EXPONENT && shift <= Double.MAX_EXPONENT) {
            return Math.scalb(1.0, shift);
        }
        return Double.NaN;
    }

    /** {@code 2^shift * x} with a factor from {@link #factor} (NaN: fall back to the exact slow path). */
    public static double scale(final double x, final int shift, final double factor) {
        return factor == factor ? x * factor : Math.scalb(x, shift);
    }

    /** FP32_BLOCK: shift applied to values of a block with global exponent {@code e}. */
    public static int shift32(final short e, final int b) {
        return e == Wire.EXPONENT_NONE ? 0 : b - e;
    }

    /** FP32_BLOCK quantization of one value: {@code rint(2^shift * x)}. */
    public static int quantize32(final double x, final int shift) {
        return (int) Math.rint(scale(x, shift));
    }

    /**
     * FP32_BLOCK dequantization of an integer sum: {@code 2^(e-b) * sum}, saturated at
     * {@code ±Double.MAX_VALUE}, or 0 when {@code e} is NONE.
     */
    public static double dequantize32(final int sum, final short e, final int b) {
        if (e == Wire.EXPONENT_NONE) {
            return 0.0;
        }
        return saturate(scale(sum, e - b));
    }

    /**
     * Finite inputs never give an infinite result: rounding can lift a sum of values near
     * Double.MAX_VALUE to 2^1024, whose nearest finite neighbour is within the error bound.
     */
    static double saturate(final double v) {
        return Double.isInfinite(v) ? Math.copySign(Double.MAX_VALUE, v) : v;
    }

    /** FP64_SPLIT: shift applied to values of a block with global exponent {@code e}. */
    public static int shift64(final short e, final int b) {
        return e == Wire.EXPONENT_NONE ? 0 : 2 * b + 1 - e;
    }

    /** FP64_SPLIT fixed-point value {@code Q = rint(2^shift * x)} (|Q| &lt;= 2^(2b+1)). */
    public static long quantize64(final double x, final int shift) {
        return (long) Math.rint(scale(x, shift));
    }

    /** High lane of {@code q}: {@code floor((q + 2^b) / 2^(b+1))}. */
    public static int high(final long q, final int b) {
        return (int) ((q + (1L << b)) >> (b + 1));
    }

    /** Low lane of {@code q}: {@code q - high * 2^(b+1)}, in [-2^b, 2^b). */
    public static int low(final long q, final int b) {
        return (int) (q - ((long) high(q, b) << (b + 1)));
    }

    /** FP64_SPLIT dequantization of the lane sums, saturated like {@link #dequantize32}. */
    public static double dequantize64(final int sumHigh, final int sumLow, final short e, final int b) {
        if (e == Wire.EXPONENT_NONE) {
            return 0.0;
        }
        final long t = ((long) sumHigh << (b + 1)) + sumLow;
        return saturate(scale((double) t, e - 2 * b - 1));
    }

    /**
     * Documented bound on {@code |result - exact sum|} for one element of a block with global exponent
     * {@code e}, before the final rounding to the output type (add half an ulp of the result for that).
     */
    public static double errorBound(final Encoding encoding, final int n, final short e) {
        if (encoding == Encoding.INT32 || e == Wire.EXPONENT_NONE) {
            return 0.0;
        }
        final int b = scaleBits(n);
        final int p = encoding == Encoding.FP64_SPLIT ? e - 2 * b - 2 : e - b - 1;
        return n * Math.scalb(1.0, p);
    }
}

package org.switchml.testing;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * The rule of docs/protocol.md section 5 worked out in exact decimal arithmetic, sharing no code with
 * org.switchml.protocol: block exponents by comparing with powers of two, quantization as an exact
 * product rounded half to even, integer sums as BigIntegers, and the dequantized value as the exact
 * product of the sum (rounded to double) and a power of two, then rounded once to double. An oracle
 * for the transport and for {@link Reference}, which is built from the library's own functions.
 */
public final class ExactSum {
    private ExactSum() {}

    /** The sums of the n workers' vectors {@code in} through FP32_BLOCK with {@code k} elements per packet. */
    public static double[] fp32(final double[][] in, final int k) {
        return sum(in, k, false);
    }

    /** The sums through FP64_SPLIT with {@code k} int32 lanes (k / 2 elements) per packet. */
    public static double[] fp64(final double[][] in, final int k) {
        return sum(in, k / 2, true);
    }

    /** B(n): the largest b with n * 2^b &lt;= 2^31 - 1, found by trying every b from 31 down. */
    static int headroomBits(final int n) {
        final BigInteger limit = BigInteger.valueOf(Integer.MAX_VALUE);
        for (int b = 31; b >= 0; b--) {
            if (BigInteger.valueOf(n).shiftLeft(b).compareTo(limit) <= 0) {
                return b;
            }
        }
        throw new IllegalArgumentException("no headroom for " + n + " workers");
    }

    /** 2^p, exactly. */
    static BigDecimal pow2(final int p) {
        final BigDecimal two = new BigDecimal(BigInteger.ONE.shiftLeft(Math.abs(p)));
        return p >= 0 ? two : BigDecimal.ONE.divide(two); // 2^-p has a finite decimal expansion
    }

    /** The smallest e with 2^e &gt; m (m &gt; 0), by exact comparison. */
    static int exponent(final BigDecimal m) {
        int e = 0;
        while (pow2(e).compareTo(m) <= 0) {
            e++;
        }
        while (pow2(e - 1).compareTo(m) > 0) {
            e--;
        }
        return e;
    }

    private static double[] sum(final double[][] in, final int perBlock, final boolean fp64) {
        final int n = in.length;
        final int length = in[0].length;
        final int b = headroomBits(n);
        final double[] out = new double[length];
        for (int start = 0; start < length; start += perBlock) {
            final int end = Math.min(length, start + perBlock);
            BigDecimal max = BigDecimal.ZERO;
            for (final double[] w : in) {
                for (int i = start; i < end; i++) {
                    max = max.max(new BigDecimal(w[i]).abs());
                }
            }
            if (max.signum() == 0) {
                continue; // every element zero: the result is +0.0
            }
            final int e = exponent(max);
            // FP64_SPLIT's lanes add up to the sum of the 64-bit Q, which is all that reaches the value.
            final int shift = fp64 ? 2 * b + 1 - e : b - e;
            final BigDecimal up = pow2(shift);
            final BigDecimal down = pow2(-shift);
            for (int i = start; i < end; i++) {
                BigInteger total = BigInteger.ZERO;
                for (final double[] w : in) {
                    final BigInteger q = new BigDecimal(w[i])
                            .multiply(up)
                            .setScale(0, RoundingMode.HALF_EVEN)
                            .toBigIntegerExact();
                    if (q.abs().compareTo(BigInteger.ONE.shiftLeft(fp64 ? 2 * b + 1 : b)) > 0) {
                        throw new AssertionError("quantized value " + q + " beyond the headroom at " + i);
                    }
                    total = total.add(q);
                }
                if (!fp64 && total.bitLength() > 31) {
                    throw new AssertionError("FP32_BLOCK sum " + total + " does not fit int32 at " + i);
                }
                final double asDouble = new BigDecimal(total).doubleValue();
                final double value = new BigDecimal(asDouble).multiply(down).doubleValue();
                out[i] = Double.isInfinite(value) ? Math.copySign(Double.MAX_VALUE, value) : value;
            }
        }
        return out;
    }
}

package org.switchml.examples;

import java.util.SplittableRandom;

/** The n workers' input vectors of one benchmark cell: float[] (FP32_BLOCK) or double[] (FP64_SPLIT). */
final class BenchVectors {
    final int n;
    final int length;
    final boolean fp64;
    final float[][] floats;
    final double[][] doubles;

    private BenchVectors(final int n, final int length, final float[][] floats, final double[][] doubles) {
        this.n = n;
        this.length = length;
        this.fp64 = doubles != null;
        this.floats = floats;
        this.doubles = doubles;
    }

    /** Rank r's vector comes from the r-th split of a generator seeded with {@code seed}. */
    static BenchVectors generate(
            final Values values, final int n, final int length, final boolean fp64, final long seed) {
        final SplittableRandom root = new SplittableRandom(seed);
        if (fp64) {
            final double[][] d = new double[n][];
            for (int r = 0; r < n; r++) {
                d[r] = values.doubles(root.split(), length, n);
            }
            return new BenchVectors(n, length, null, d);
        }
        final float[][] f = new float[n][];
        for (int r = 0; r < n; r++) {
            f[r] = values.floats(root.split(), length, n);
        }
        return new BenchVectors(n, length, f, null);
    }

    /** Given float vectors (FP32_BLOCK), one per rank, all of one length. */
    static BenchVectors ofFloats(final float[][] f) {
        return new BenchVectors(f.length, f[0].length, f, null);
    }

    /** Given double vectors (FP64_SPLIT), one per rank, all of one length. */
    static BenchVectors ofDoubles(final double[][] d) {
        return new BenchVectors(d.length, d[0].length, null, d);
    }

    /** Element i of rank r, as a double (exact for floats). */
    double at(final int r, final int i) {
        return fp64 ? doubles[r][i] : floats[r][i];
    }

    /** Bytes of one element of the input type. */
    int elementBytes() {
        return fp64 ? Double.BYTES : Float.BYTES;
    }
}

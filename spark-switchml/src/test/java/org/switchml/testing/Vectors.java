package org.switchml.testing;

import java.util.SplittableRandom;

/** Seeded test vectors whose blocks span many magnitudes, zeros included. */
public final class Vectors {
    private Vectors() {}

    /** Gaussian values, each 64-element run scaled by its own power of two, some runs all zero. */
    public static double[] mixed(final SplittableRandom rnd, final int length) {
        final double[] v = new double[length];
        double scale = 1;
        for (int i = 0; i < length; i++) {
            if (i % 64 == 0) {
                final int pick = rnd.nextInt(10);
                scale = pick == 0 ? 0 : Math.scalb(1.0, rnd.nextInt(-40, 40));
            }
            v[i] = scale * gaussian(rnd);
        }
        return v;
    }

    public static double gaussian(final SplittableRandom rnd) {
        final double u = 1 - rnd.nextDouble();
        final double w = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * w);
    }

    public static float[] toFloats(final double[] v) {
        final float[] f = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            f[i] = (float) v[i];
        }
        return f;
    }

    public static double[] toDoubles(final float[] v) {
        final double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return d;
    }
}

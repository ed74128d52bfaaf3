package org.switchml.examples;

import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

/**
 * Seeded value generators for the benchmark's input vectors. Each fills one worker's vector; every
 * generator produces only finite values, and sums of {@code n} workers' values stay finite.
 */
enum Values {
    /** Standard normal values. */
    GAUSSIAN,
    /** Only ±0 (every block's exponent is NONE). */
    ZEROS,
    /** Magnitudes in [0.5, 0.99] x MAX/n (MAX = Float.MAX_VALUE, or Double.MAX_VALUE with --fp64), random signs. */
    HUGE,
    /** Subnormal values of the element type, random signs. */
    TINY,
    /**
     * Runs of 1..512 elements, each at its own magnitude 2^-60..2^60 (gaussian within the run); 10% of
     * runs are zero and 5% subnormal. Runs do not align with blocks, so blocks mix magnitudes.
     */
    MIXED;

    static Values parse(final String name) {
        for (final Values v : values()) {
            if (v.name().equalsIgnoreCase(name)) {
                return v;
            }
        }
        return null;
    }

    static String names() {
        return Arrays.stream(values())
                .map(v -> v.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining("|"));
    }

    /** A random nonzero float subnormal of either sign. */
    private static float subnormalFloat(final SplittableRandom rnd) {
        return Float.intBitsToFloat(rnd.nextInt(1, 1 << 23) | (rnd.nextBoolean() ? 0x8000_0000 : 0));
    }

    /** One worker's float vector for an n-worker job. */
    float[] floats(final SplittableRandom rnd, final int length, final int n) {
        final float[] v = new float[length];
        switch (this) {
            case GAUSSIAN:
                for (int i = 0; i < length; i++) {
                    v[i] = (float) rnd.nextGaussian();
                }
                break;
            case ZEROS:
                for (int i = 0; i < length; i++) {
                    v[i] = rnd.nextBoolean() ? 0.0f : -0.0f;
                }
                break;
            case HUGE: {
                final double top = Float.MAX_VALUE / (double) n;
                for (int i = 0; i < length; i++) {
                    v[i] = (float) (sign(rnd) * top * rnd.nextDouble(0.5, 0.99));
                }
                break;
            }
            case TINY:
                for (int i = 0; i < length; i++) {
                    v[i] = subnormalFloat(rnd);
                }
                break;
            case MIXED: {
                int i = 0;
                while (i < length) {
                    final int end = Math.min(length, i + rnd.nextInt(1, 513));
                    final int pick = rnd.nextInt(20);
                    if (pick < 2) {
                        Arrays.fill(v, i, end, 0.0f);
                    } else if (pick == 2) {
                        for (; i < end; i++) {
                            v[i] = subnormalFloat(rnd);
                        }
                    } else {
                        final double scale = Math.scalb(1.0, rnd.nextInt(-60, 61));
                        for (; i < end; i++) {
                            v[i] = (float) (scale * rnd.nextGaussian());
                        }
                    }
                    i = end;
                }
                break;
            }
            default:
                throw new AssertionError(this);
        }
        return v;
    }

    /** One worker's double vector for an n-worker job. */
    double[] doubles(final SplittableRandom rnd, final int length, final int n) {
        final double[] v = new double[length];
        switch (this) {
            case GAUSSIAN:
                for (int i = 0; i < length; i++) {
                    v[i] = rnd.nextGaussian();
                }
                break;
            case ZEROS:
                for (int i = 0; i < length; i++) {
                    v[i] = rnd.nextBoolean() ? 0.0 : -0.0;
                }
                break;
            case HUGE: {
                final double top = Double.MAX_VALUE / n;
                for (int i = 0; i < length; i++) {
                    v[i] = sign(rnd) * top * rnd.nextDouble(0.5, 0.99);
                }
                break;
            }
            case TINY:
                for (int i = 0; i < length; i++) {
                    v[i] = subnormal(rnd);
                }
                break;
            case MIXED: {
                int i = 0;
                while (i < length) {
                    final int end = Math.min(length, i + rnd.nextInt(1, 513));
                    final int pick = rnd.nextInt(20);
                    if (pick < 2) {
                        Arrays.fill(v, i, end, 0.0);
                    } else if (pick == 2) {
                        for (; i < end; i++) {
                            v[i] = subnormal(rnd);
                        }
                    } else {
                        final double scale = Math.scalb(1.0, rnd.nextInt(-60, 61));
                        for (; i < end; i++) {
                            v[i] = scale * rnd.nextGaussian();
                        }
                    }
                    i = end;
                }
                break;
            }
            default:
                throw new AssertionError(this);
        }
        return v;
    }

    private static double sign(final SplittableRandom rnd) {
        return rnd.nextBoolean() ? 1.0 : -1.0;
    }

    private static double subnormal(final SplittableRandom rnd) {
        return Double.longBitsToDouble(rnd.nextLong(1, 1L << 52) | (rnd.nextBoolean() ? Long.MIN_VALUE : 0));
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package org.switchml.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.switchml.testing.Seeds;

/**
 * The vector-free L-BFGS direction against the two-loop one: the same iterates up to rounding, over
 * enough iterations for the pair ring to wrap several times; and the size at which it is chosen.
 */
class LbfgsVectorFreeTest {

    @Test
    void chosenFromTheThresholdOn() {
        assertFalse(new Lbfgs(Lbfgs.VECTOR_FREE_MIN - 1, 10, 100, 1e-6).vectorFree());
        assertTrue(new Lbfgs(Lbfgs.VECTOR_FREE_MIN, 10, 100, 1e-6).vectorFree());
    }

    /** A smooth, non-quadratic, coupled objective: sum_j c_j (x_j - t_j)^2 + log cosh(x_j + x_{j+1}). */
    private static QuasiNewton.Objective objective(final double[] c, final double[] t) {
        return (x, g) -> {
            final int n = x.length;
            double f = 0;
            for (int j = 0; j < n; j++) {
                final double d = x[j] - t[j];
                f += c[j] * d * d;
                g[j] += 2 * c[j] * d;
                final int k = (j + 1) % n;
                final double z = x[j] + x[k];
                f += Math.log(Math.cosh(z));
                final double th = Math.tanh(z);
                g[j] += th;
                g[k] += th;
            }
            return f;
        };
    }

    @Test
    void sameIteratesAsTheTwoLoopForm() {
        final long seed = Seeds.seed("LbfgsVectorFreeTest.iterates", 31);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int n = 3000;
        final double[] c = new double[n];
        final double[] t = new double[n];
        for (int j = 0; j < n; j++) {
            c[j] = Math.pow(10, 2 * rnd.nextDouble() - 1);
            t[j] = 3 * rnd.nextGaussian();
        }
        for (final int m : new int[] {1, 3, 10}) {
            final Lbfgs twoLoop = new Lbfgs(n, m, 60, 0.0, false);
            final Lbfgs vectorFree = new Lbfgs(n, m, 60, 0.0, true);
            final double[] a = twoLoop.minimize(objective(c, t), new double[n]);
            final double[] b = vectorFree.minimize(objective(c, t), new double[n]);
            final double[] ha = twoLoop.objectiveHistory(a);
            final double[] hb = vectorFree.objectiveHistory(b);
            assertEquals(ha.length, hb.length, "m=" + m + ": states");
            for (int i = 0; i < ha.length; i++) {
                assertEquals(ha[i], hb[i], 1e-12 * Math.abs(ha[i]), "m=" + m + ": objective of state " + i);
            }
            assertEquals(twoLoop.iterations(a), vectorFree.iterations(b), "m=" + m + ": iterations");
            final double[] xa = twoLoop.solution(a);
            final double[] xb = vectorFree.solution(b);
            double num = 0;
            double den = 0;
            for (int j = 0; j < n; j++) {
                num += (xa[j] - xb[j]) * (xa[j] - xb[j]);
                den += xa[j] * xa[j];
            }
            assertTrue(Math.sqrt(num / den) < 1e-9, "m=" + m + ": x rel diff " + Math.sqrt(num / den));
            System.out.printf(
                    "[lbfgs vector-free] m=%d: %d iterations, final objective %.15g vs %.15g, x rel diff %.2e%n",
                    m, vectorFree.iterations(b), ha[ha.length - 1], hb[hb.length - 1], Math.sqrt(num / den));
        }
    }

    /**
     * Two runs of the vector-free form give the same bits (it is what every task computes), and the numbers
     * it takes from its sweeps instead of separate passes are the same bits as those passes.
     */
    @Test
    void deterministic() {
        final long seed = Seeds.seed("LbfgsVectorFreeTest.deterministic", 32);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int n = 2000;
        final double[] c = new double[n];
        final double[] t = new double[n];
        for (int j = 0; j < n; j++) {
            c[j] = 0.1 + rnd.nextDouble();
            t[j] = rnd.nextGaussian();
        }
        final Lbfgs opt = new Lbfgs(n, 10, 30, 0.0, true);
        final double[] st = opt.minimize(objective(c, t), new double[n]);
        assertArrayEquals(st, opt.minimize(objective(c, t), new double[n]));
        // The gradient's norm comes from the sweep that stored the last pair: the bits of a separate pass.
        assertTrue(opt.iterations(st) > 10, "iterations " + opt.iterations(st));
        assertEquals(opt.state(st).grad().norm(), opt.adjustedGradientNorm(st));
    }
}

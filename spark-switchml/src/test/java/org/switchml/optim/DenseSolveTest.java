package org.switchml.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.switchml.testing.Seeds;

/** L-BFGS-B's small dense solver: LU with partial pivoting, against exact answers and its own residuals. */
class DenseSolveTest {

    /** The 3 x 3 Hilbert matrix, whose inverse is known in integers. */
    private static final double[] HILBERT = {1, 1.0 / 2, 1.0 / 3, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 3, 1.0 / 4, 1.0 / 5};

    private static final double[] HILBERT_INVERSE = {9, -36, 30, -36, 192, -180, 30, -180, 180};

    @Test
    void invertsTheHilbertMatrix() {
        final double[] a = HILBERT.clone();
        final double[] inv = DenseSolve.invert(a, 3);
        assertNotNull(inv);
        for (int i = 0; i < 9; i++) {
            assertEquals(HILBERT_INVERSE[i], inv[i], 1e-10 * 192, "element " + i);
        }
        assertArrayEquals(HILBERT, a, "the input is not modified");
    }

    @Test
    void solvesASystemThatNeedsPivoting() {
        // a zero in the first pivot position: without row exchanges the factorization divides by zero
        final double[] a = {0, 2, 1, 1, 1, 1, 2, 1, 3};
        final double[] x = {1, -2, 3};
        final double[] b = times(a, x, 3);
        final double[] bCopy = b.clone();
        final double[] solved = DenseSolve.solve(a, b, 3);
        assertNotNull(solved);
        assertArrayEquals(x, solved, 1e-12);
        assertArrayEquals(bCopy, b, "the right-hand side is not modified");
    }

    @Test
    void randomSystemsHaveSmallResiduals() {
        final long seed = Seeds.seed("DenseSolveTest.random", 0x5017E);
        final SplittableRandom rnd = new SplittableRandom(seed);
        for (final int q : new int[] {1, 2, 5, 10, 20}) {
            final double[] a = new double[q * q];
            for (int i = 0; i < a.length; i++) {
                a[i] = rnd.nextGaussian();
            }
            for (int i = 0; i < q; i++) {
                a[i * q + i] += q; // diagonally dominant: well conditioned
            }
            final double[] x = new double[q];
            for (int i = 0; i < q; i++) {
                x[i] = rnd.nextGaussian();
            }
            final double[] solved = DenseSolve.solve(a, times(a, x, q), q);
            assertArrayEquals(x, solved, 1e-12, "q=" + q);
            final double[] inv = DenseSolve.invert(a, q);
            for (int r = 0; r < q; r++) {
                for (int c = 0; c < q; c++) {
                    double sum = 0;
                    for (int j = 0; j < q; j++) {
                        sum += a[r * q + j] * inv[j * q + c];
                    }
                    assertEquals(r == c ? 1.0 : 0.0, sum, 1e-12, "q=" + q + ": (A A^-1)[" + r + "][" + c + "]");
                }
            }
        }
    }

    @Test
    void singularOrNaNMatricesGiveNull() {
        final double[] singular = {1, 2, 2, 4};
        assertNull(DenseSolve.solve(singular, new double[] {1, 1}, 2));
        assertNull(DenseSolve.invert(singular, 2));
        assertNull(DenseSolve.invert(new double[] {Double.NaN, 0, 0, 1}, 2));
        assertNull(DenseSolve.invert(new double[4], 2));
        // the positive control: the same shape, not singular
        final double[] regular = {1, 2, 2, 5};
        final double[] inv = DenseSolve.invert(regular, 2);
        assertNotNull(inv);
        assertArrayEquals(new double[] {5, -2, -2, 1}, inv, 1e-12);
        assertTrue(DenseSolve.invert(new double[0], 0).length == 0, "the empty system has the empty inverse");
    }

    private static double[] times(final double[] a, final double[] x, final int q) {
        final double[] b = new double[q];
        for (int r = 0; r < q; r++) {
            for (int c = 0; c < q; c++) {
                b[r] += a[r * q + c] * x[c];
            }
        }
        return b;
    }
}

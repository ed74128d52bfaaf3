package org.switchml.optim;

import java.util.Arrays;

/** Small dense linear algebra (row-major, at most 2m x 2m) for L-BFGS-B: LU with partial pivoting. */
final class DenseSolve {
    private DenseSolve() {}

    /** Solves a x = b (a is q x q, row-major; not modified); null if a is singular. */
    static double[] solve(final double[] a, final double[] b, final int q) {
        final double[] lu = a.clone();
        final int[] piv = new int[q];
        if (!factor(lu, piv, q)) {
            return null;
        }
        final double[] x = b.clone();
        substitute(lu, piv, q, x);
        return x;
    }

    /** The inverse of a (q x q, row-major; not modified); null if a is singular. */
    static double[] invert(final double[] a, final int q) {
        final double[] lu = a.clone();
        final int[] piv = new int[q];
        if (!factor(lu, piv, q)) {
            return null;
        }
        final double[] inv = new double[q * q];
        final double[] col = new double[q];
        for (int c = 0; c < q; c++) {
            Arrays.fill(col, 0.0);
            col[c] = 1.0;
            substitute(lu, piv, q, col);
            for (int r = 0; r < q; r++) {
                inv[r * q + c] = col[r];
            }
        }
        return inv;
    }

    private static boolean factor(final double[] a, final int[] piv, final int q) {
        for (int k = 0; k < q; k++) {
            int p = k;
            double max = Math.abs(a[k * q + k]);
            for (int r = k + 1; r < q; r++) {
                final double v = Math.abs(a[r * q + k]);
                if (v > max) {
                    max = v;
                    p = r;
                }
            }
            if (max == 0.0 || Double.isNaN(max)) {
                return false;
            }
            piv[k] = p;
            if (p != k) {
                for (int c = 0; c < q; c++) {
                    final double tmp = a[k * q + c];
                    a[k * q + c] = a[p * q + c];
                    a[p * q + c] = tmp;
                }
            }
            final double pivot = a[k * q + k];
            for (int r = k + 1; r < q; r++) {
                final double f = a[r * q + k] / pivot;
                a[r * q + k] = f;
                for (int c = k + 1; c < q; c++) {
                    a[r * q + c] -= f * a[k * q + c];
                }
            }
        }
        return true;
    }

    private static void substitute(final double[] lu, final int[] piv, final int q, final double[] x) {
        for (int k = 0; k < q; k++) {
            final int p = piv[k];
            if (p != k) {
                final double tmp = x[k];
                x[k] = x[p];
                x[p] = tmp;
            }
        }
        for (int r = 1; r < q; r++) {
            double sum = x[r];
            for (int c = 0; c < r; c++) {
                sum -= lu[r * q + c] * x[c];
            }
            x[r] = sum;
        }
        for (int r = q - 1; r >= 0; r--) {
            double sum = x[r];
            for (int c = r + 1; c < q; c++) {
                sum -= lu[r * q + c] * x[c];
            }
            x[r] = sum / lu[r * q + r];
        }
    }
}

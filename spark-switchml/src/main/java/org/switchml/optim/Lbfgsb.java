package org.switchml.optim;

import java.util.Arrays;

/**
 * L-BFGS-B (Byrd, Lu, Nocedal and Zhu, 1995) for box bounds, as breeze 2.1.0's
 * {@code LBFGSB(lower, upper, maxIter, m, tol)} runs it for MLlib's bounded fits (strong Wolfe search
 * with at most 64 trials and 64 zoom steps): the generalized Cauchy point along the projected gradient,
 * then (after the first iteration) direct primal subspace minimization over the free variables; the
 * compact representation {@code W = [Y, theta S]}, {@code M} (2k x 2k) is updated only when
 * {@code |s.y| > 2.2e-16 |y|}. It stops, besides the default checks, when the projected gradient step
 * {@code |P(x - g) - x|_inf < 1e-5}.
 *
 * <p>Two differences from breeze, both where breeze would throw an error that aborts MLlib's fit: a
 * step bound at or below 0, a singular middle matrix or a Cauchy point search with no breakpoint fail the
 * iteration instead (the history is reset, then the fit stops), and a first trial step of 1 beyond the
 * largest feasible step is clipped to it.
 */
public final class Lbfgsb extends QuasiNewton {
    private static final long serialVersionUID = 1L;
    private static final int SEARCH_STEPS = 64;
    private static final double CURVATURE_EPS = 2.2e-16;
    private static final double PROJECTED_GRADIENT_EPS = 1e-5;

    private final double[] lower;
    private final double[] upper;
    private final StrongWolfe search = new StrongWolfe(SEARCH_STEPS, SEARCH_STEPS);

    /**
     * @param lower   lower bounds (may be -infinity)
     * @param upper   upper bounds (may be +infinity)
     * @param m       curvature pairs kept (MLlib: 10)
     * @param maxIter iterations
     * @param tol     convergence tolerance (MLlib's tol)
     */
    public Lbfgsb(final double[] lower, final double[] upper, final int m, final int maxIter, final double tol) {
        super(3, lower.length, m, maxIter, tol, 3, 4 * m * m);
        if (upper.length != lower.length) {
            throw new IllegalArgumentException("bounds have lengths " + lower.length + " and " + upper.length);
        }
        for (int i = 0; i < lower.length; i++) {
            if (!(lower[i] <= upper[i])) {
                throw new IllegalArgumentException("bound " + i + ": lower " + lower[i] + " > upper " + upper[i]);
            }
        }
        this.lower = lower.clone();
        this.upper = upper.clone();
    }

    /** Strong Wolfe search as breeze's L-BFGS-B sets it: up to 64 trials, then up to 64 zoom steps. */
    @Override
    public int maxEvaluationsPerSearch() {
        return search.maxEvaluations();
    }

    @Override
    void checkStart(final double[] x0) {
        for (int i = 0; i < n; i++) {
            if (!(lower[i] <= x0[i] && x0[i] <= upper[i])) {
                throw new IllegalArgumentException(
                        "x0[" + i + "] = " + x0[i] + " is outside [" + lower[i] + ", " + upper[i] + "]");
            }
        }
    }

    @Override
    boolean extraConverged(final OptimizerState st) {
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector g = st.grad();
        double max = 0.0;
        for (int i = 0; i < n; i++) {
            final double xi = x.get(i);
            final double v = xi - g.get(i);
            final double d;
            if (v <= lower[i]) {
                d = lower[i] - xi;
            } else if (upper[i] <= v) {
                d = upper[i] - xi;
            } else {
                d = v - xi;
            }
            max = Math.max(max, Math.abs(d));
        }
        return max < PROJECTED_GRADIENT_EPS;
    }

    /**
     * The compact representation {@code W = [Y, theta S]} (n x 2k) of a state's k pairs, and its middle matrix
     * {@code M} (2k x 2k, row-major), kept in the optimizer's registers.
     */
    private static final class Compact {
        private final OptimizerState.Vector[] s;
        private final OptimizerState.Vector[] y;
        private final OptimizerState.Vector middle;
        private final int k;
        private final double theta;

        Compact(final OptimizerState st) {
            final CurvatureHistory h = new CurvatureHistory(st);
            this.k = h.size();
            this.s = new OptimizerState.Vector[k];
            this.y = new OptimizerState.Vector[k];
            for (int j = 0; j < k; j++) {
                s[j] = h.s(j);
                y[j] = h.y(j);
            }
            this.middle = st.registers();
            this.theta = st.theta();
        }

        /** Row i of W into {@code out} (length 2k). */
        void wRow(final int i, final double[] out) {
            for (int j = 0; j < k; j++) {
                out[j] = y[j].get(i);
                out[k + j] = s[j].get(i) * theta;
            }
        }

        /** M times v (2k). */
        double[] mTimes(final double[] v) {
            final int q = 2 * k;
            final double[] out = new double[q];
            for (int r = 0; r < q; r++) {
                double sum = 0.0;
                for (int c = 0; c < q; c++) {
                    sum += middle.get(r * q + c) * v[c];
                }
                out[r] = sum;
            }
            return out;
        }

        /** Element (r, c) of M. */
        double m(final int r, final int c) {
            return middle.get(r * 2 * k + c);
        }
    }

    @Override
    void direction(final OptimizerState st) {
        final Compact w = new Compact(st);
        final int k = w.k;
        final double theta = w.theta;
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector g = st.grad();
        final int q = 2 * k;

        // Generalized Cauchy point: breakpoints t_i along the projected steepest descent path.
        final double[] t = new double[n];
        final double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            final double gi = g.get(i);
            if (gi == 0) {
                t[i] = Double.MAX_VALUE;
            } else {
                final double ti = gi < 0 ? (x.get(i) - upper[i]) / gi : (x.get(i) - lower[i]) / gi;
                t[i] = ti;
                d[i] = ti == 0 ? 0 : -gi;
            }
        }
        final double[] xc = x.copy();
        final double[] row = new double[q];
        double[] p = new double[q];
        for (int i = 0; i < n; i++) {
            if (d[i] != 0) {
                w.wRow(i, row);
                for (int j = 0; j < q; j++) {
                    p[j] += row[j] * d[i];
                }
            }
        }
        double[] c = new double[q];
        double fd = g.dot(d);
        double fdd = (-1.0 * theta) * fd - dotq(p, w.mTimes(p));
        double dtMin = -(fd / fdd);
        double oldT = 0.0;
        final int[] sorted = sortByBreakpoint(t);
        int i = 0;
        while (i < n && t[sorted[i]] == 0) {
            i++;
        }
        if (i == n) {
            throw new SearchFailure("no breakpoint for the Cauchy point");
        }
        int b = sorted[i];
        double minT = t[b];
        double deltaT = minT - oldT;
        while (deltaT <= dtMin && i < n) {
            xc[b] = 0 < d[b] ? upper[b] : lower[b];
            final double zb = xc[b] - x.get(b);
            final double[] cNext = new double[q];
            for (int j = 0; j < q; j++) {
                cNext[j] = c[j] + p[j] * deltaT;
            }
            c = cNext;
            w.wRow(b, row);
            final double gb = g.get(b);
            final double[] wg = new double[q];
            for (int j = 0; j < q; j++) {
                wg[j] = row[j] * gb;
            }
            fd += deltaT * fdd + gb * gb + theta * gb * zb - dotq(wg, w.mTimes(c));
            fdd += -1.0 * theta * gb * gb - 2.0 * (gb * dotq(row, w.mTimes(p))) - gb * gb * dotq(row, w.mTimes(row));
            for (int j = 0; j < q; j++) {
                p[j] += row[j] * gb;
            }
            d[b] = 0.0;
            dtMin = -fd / fdd;
            oldT = minT;
            i++;
            if (i < n) {
                b = sorted[i];
                minT = t[b];
                deltaT = minT - oldT;
            }
        }
        dtMin = Math.max(dtMin, 0);
        oldT += dtMin;
        for (int j = i; j < n; j++) {
            final int idx = sorted[j];
            xc[idx] = x.get(idx) + oldT * d[idx];
        }
        for (int j = 0; j < q; j++) {
            c[j] += p[j] * dtMin;
        }
        clip(xc);

        final OptimizerState.Vector dir = st.dir();
        if (st.iterations() == 0) {
            for (int j = 0; j < n; j++) {
                dir.set(j, xc[j] - x.get(j));
            }
            return;
        }
        final double[] sub = subspaceMinimum(st, w, xc, c);
        clip(sub);
        for (int j = 0; j < n; j++) {
            dir.set(j, sub[j] - x.get(j));
        }
    }

    /** Direct primal subspace minimization over the variables the Cauchy point left free. */
    private double[] subspaceMinimum(final OptimizerState st, final Compact w, final double[] xc, final double[] c) {
        final int q = 2 * w.k;
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector g = st.grad();
        final double theta = w.theta;
        final double invTheta = 1.0 / theta;
        int free = 0;
        final int[] freeIdx = new int[n];
        for (int i = 0; i < n; i++) {
            if (xc[i] != upper[i] && xc[i] != lower[i]) {
                freeIdx[free++] = i;
            }
        }
        final double[] mc = w.mTimes(c);
        final double[] rc = new double[free];
        final double[] wzr = new double[q];
        final double[] nMat = new double[q * q];
        final double[] row = new double[q];
        for (int f = 0; f < free; f++) {
            final int i = freeIdx[f];
            w.wRow(i, row);
            // r = g + theta (xc - x) - W M c, restricted to the free variables
            rc[f] = g.get(i) + (xc[i] - x.get(i)) * theta - dotq(row, mc);
            for (int a = 0; a < q; a++) {
                wzr[a] += row[a] * rc[f];
                for (int bb = 0; bb < q; bb++) {
                    nMat[a * q + bb] += row[a] * row[bb];
                }
            }
        }
        double[] v = w.mTimes(wzr);
        if (q > 0) {
            // N = I - M (WZ WZ^T / theta); v = N^-1 v
            for (int a = 0; a < q * q; a++) {
                nMat[a] *= invTheta;
            }
            final double[] mn = new double[q * q];
            for (int r = 0; r < q; r++) {
                for (int cc = 0; cc < q; cc++) {
                    double sum = 0.0;
                    for (int j = 0; j < q; j++) {
                        sum += w.m(r, j) * nMat[j * q + cc];
                    }
                    mn[r * q + cc] = (r == cc ? 1.0 : 0.0) - sum;
                }
            }
            v = DenseSolve.solve(mn, v, q);
            if (v == null) {
                throw new SearchFailure("singular subspace system");
            }
        }
        final double[] du = new double[free];
        final double inv2 = invTheta * invTheta;
        for (int f = 0; f < free; f++) {
            w.wRow(freeIdx[f], row);
            final double wzv = dotq(row, v) * inv2;
            du[f] = (rc[f] * invTheta + wzv) * -1.0;
        }
        double star = 1.0;
        for (int f = 0; f < free; f++) {
            final int i = freeIdx[f];
            if (0 < du[f]) {
                star = Math.min(star, (upper[i] - xc[i]) / du[f]);
            } else if (0 > du[f]) {
                star = Math.min(star, (lower[i] - xc[i]) / du[f]);
            }
        }
        if (!(star >= 0.0 && star <= 1.0)) {
            throw new SearchFailure("subspace step " + star + " outside [0, 1]");
        }
        final double[] out = xc.clone();
        for (int f = 0; f < free; f++) {
            out[freeIdx[f]] = out[freeIdx[f]] + du[f] * star;
        }
        return out;
    }

    private static double dotq(final double[] a, final double[] b) {
        double sum = 0.0;
        for (int i = 0; i < a.length; i++) {
            sum += a[i] * b[i];
        }
        return sum;
    }

    /** Indices in increasing breakpoint order, ties by index (breeze's stable sort). */
    private static int[] sortByBreakpoint(final double[] t) {
        final Integer[] idx = new Integer[t.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (a, b) -> t[a] < t[b] ? -1 : (t[b] < t[a] ? 1 : 0));
        final int[] out = new int[idx.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = idx[i];
        }
        return out;
    }

    private void clip(final double[] v) {
        for (int i = 0; i < n; i++) {
            if (v[i] > upper[i]) {
                v[i] = upper[i];
            }
            if (v[i] < lower[i]) {
                v[i] = lower[i];
            }
        }
    }

    @Override
    void beginSearch(final OptimizerState st) {
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector d = st.dir();
        double bound = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            final double di = d.get(i);
            if (di != 0.0) {
                final double b = di < 0.0 ? lower[i] : upper[i];
                final double step = (b - x.get(i)) / di;
                if (!(step > 0.0)) {
                    throw new SearchFailure("non-positive step bound " + step + " at coordinate " + i);
                }
                if (step < bound) {
                    bound = step;
                }
            }
        }
        search.begin(st, Math.min(1.0, bound), bound, st.value(), st.grad().dot(d));
    }

    @Override
    LineSearch searchStep(final OptimizerState st, final double fv, final double dd) {
        return search.step(st, fv, dd);
    }

    @Override
    void takeStep(final OptimizerState st, final double alpha, final double[] out) {
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector d = st.dir();
        for (int i = 0; i < n; i++) {
            out[i] = x.get(i) + d.get(i) * alpha;
        }
        clip(out);
    }

    @Override
    void updateHistory(final OptimizerState st, final double[] newX, final double[] newGrad) {
        final double[] sv = new double[n];
        final double[] yv = new double[n];
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector g = st.grad();
        for (int i = 0; i < n; i++) {
            sv[i] = newX[i] - x.get(i);
            yv[i] = newGrad[i] - g.get(i);
        }
        final double yy = dotq(yv, yv);
        if (!(CURVATURE_EPS * Math.sqrt(yy) < Math.abs(dotq(sv, yv)))) {
            return; // too little curvature: keep the old compact representation
        }
        final CurvatureHistory h = new CurvatureHistory(st);
        h.push(sv, yv);
        final double theta = yy / dotq(yv, sv);
        final int k = h.size();
        final int q = 2 * k;
        // MM = [[-D, L^T], [L, theta S^T S]] with A = S^T Y, L its strictly lower part, D its diagonal
        final double[] mm = new double[q * q];
        for (int a = 0; a < k; a++) {
            final OptimizerState.Vector sa = h.s(a);
            for (int b = 0; b < k; b++) {
                final double sy = sa.dot(h.y(b));
                if (a == b) {
                    mm[a * q + b] = sy * -1.0;
                } else if (a > b) {
                    mm[(k + a) * q + b] = sy; // L
                    mm[b * q + (k + a)] = sy; // L^T
                }
                mm[(k + a) * q + (k + b)] = sa.dot(h.s(b)) * theta;
            }
        }
        final double[] inv = DenseSolve.invert(mm, q);
        if (inv == null) {
            throw new SearchFailure("singular L-BFGS-B middle matrix");
        }
        st.theta(theta);
        st.registers().copyFrom(inv, 0, q * q);
    }
}

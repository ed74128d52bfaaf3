package org.switchml.optim;

/**
 * L-BFGS as breeze 2.1.0's {@code LBFGS(maxIter, m, tol)} runs it for MLlib: the two-loop direction over
 * the last {@code m} pairs (every pair is kept; a pair with negative curvature fails the iteration),
 * a strong Wolfe line search (c1 = 1e-4, c2 = 0.9, at most 10 trials and 10 zoom steps) starting at
 * {@code 1/|dir|} in the first iteration and at 1 afterwards, and a step-size underflow failure when
 * {@code alpha * |grad| < 1e-10}. See {@link QuasiNewton} for the machine and the state.
 *
 * <p>Large models ({@code n >= }{@link #VECTOR_FREE_MIN}): the direction is computed vector-free. The
 * two-loop recursion is the same, but run on the coefficients of the direction in the basis of the stored
 * vectors and the gradient, from their dot products; those of a new pair with the stored ones (and the new
 * gradient's with all of them) are computed in the sweep that stores the pair, and kept in the state. Then
 * one sweep forms the direction. Two sweeps over the history per iteration instead of about {@code 2m}:
 * about half the memory read (at 10^7 coefficients on a 2-vCPU VM, the pair update and the direction took
 * 489–612 ms per iteration against 621–647 ms; docs/results/README.md, "The replicated L-BFGS update"). The iterates are those of the
 * two-loop form up to rounding (not bit-identical with breeze); every task still computes the same bits.
 */
public final class Lbfgs extends QuasiNewton {
    private static final long serialVersionUID = 1L;
    private static final int SEARCH_STEPS = 10;
    /** Elements per block of the vector-free sweeps: the block of the new vectors stays in cache. */
    private static final int BLOCK = 2048;

    /** The smallest dimension at which {@link #Lbfgs(int, int, int, double)} computes vector-free. */
    public static final int VECTOR_FREE_MIN = 1 << 18;

    private final boolean vectorFree;
    private final StrongWolfe search = new StrongWolfe(SEARCH_STEPS, SEARCH_STEPS);

    /**
     * @param n       coefficients
     * @param m       curvature pairs kept (MLlib: 10)
     * @param maxIter iterations
     * @param tol     convergence tolerance (MLlib's tol)
     */
    public Lbfgs(final int n, final int m, final int maxIter, final double tol) {
        this(n, m, maxIter, tol, n >= VECTOR_FREE_MIN);
    }

    /** As {@link #Lbfgs(int, int, int, double)}, choosing the form of the direction explicitly (tests). */
    Lbfgs(final int n, final int m, final int maxIter, final double tol, final boolean vectorFree) {
        super(vectorFree ? 4 : 1, n, m, maxIter, tol, 3, vectorFree ? Dots.registers(m) : 0);
        this.vectorFree = vectorFree;
    }

    /** Strong Wolfe search: up to {@code SEARCH_STEPS} trials, then up to as many zoom steps. */
    @Override
    public int maxEvaluationsPerSearch() {
        return search.maxEvaluations();
    }

    /** Whether the direction is computed vector-free. */
    public boolean vectorFree() {
        return vectorFree;
    }

    /**
     * The vector-free form's registers: the dot products the direction needs, by ring slot. {@code y_t . s_u}
     * (t newer than u) and {@code y_t . y_u} (symmetric) for every two pairs, and {@code g . s_u},
     * {@code g . y_u} of the state's gradient, written for every stored pair by each push, which also moves
     * the gradient in, so they are current whenever a pair is stored; the gradient's sum of squares from that
     * push (every iteration ends so), and {@code grad . dir} from the sweep that wrote dir.
     */
    private static final class Dots {
        private final OptimizerState.Vector r;
        private final int m;

        Dots(final OptimizerState st, final int m) {
            this.r = st.registers();
            this.m = m;
        }

        static int registers(final int m) {
            return 2 * m * m + 2 * m + 2;
        }

        double ys(final int t, final int u) {
            return r.get(t * m + u);
        }

        void ys(final int t, final int u, final double v) {
            r.set(t * m + u, v);
        }

        double yy(final int t, final int u) {
            return r.get(m * m + t * m + u);
        }

        void yy(final int t, final int u, final double v) {
            r.set(m * m + t * m + u, v);
        }

        double gs(final int u) {
            return r.get(2 * m * m + 2 * u);
        }

        void gs(final int u, final double v) {
            r.set(2 * m * m + 2 * u, v);
        }

        double gy(final int u) {
            return r.get(2 * m * m + 2 * u + 1);
        }

        void gy(final int u, final double v) {
            r.set(2 * m * m + 2 * u + 1, v);
        }

        double gradSquares() {
            return r.get(2 * m * m + 2 * m);
        }

        void gradSquares(final double v) {
            r.set(2 * m * m + 2 * m, v);
        }

        double gradDotDir() {
            return r.get(2 * m * m + 2 * m + 1);
        }

        void gradDotDir(final double v) {
            r.set(2 * m * m + 2 * m + 1, v);
        }
    }

    @Override
    void direction(final OptimizerState st) {
        final CurvatureHistory h = new CurvatureHistory(st);
        if (!vectorFree || h.size() == 0) {
            h.twoLoop(st.grad(), st.dir());
            return;
        }
        final Dots dots = new Dots(st, m);
        final int k = h.size();
        final double sy = h.sy(k - 1);
        if (sy < 0 || Double.isNaN(sy)) {
            throw new SearchFailure("NaN history");
        }
        final double diag = sy / h.yy(k - 1);
        final int[] slot = new int[k];
        for (int j = 0; j < k; j++) {
            slot[j] = h.slot(j);
        }
        // dir = dg * g + sum_j (ds[j] * s_j + dy[j] * y_j), pairs by age (0 oldest); the recursion of twoLoop
        // on these coefficients. Only the products it needs are kept: y_i . s_j with i newer than j (first
        // loop: the y of newer pairs against s_j; second loop: s of older pairs against y_j), y_i . y_j, g . *.
        double dg = 1.0;
        final double[] ds = new double[k];
        final double[] dy = new double[k];
        final double[] as = new double[k];
        for (int j = k - 1; j >= 0; j--) {
            double dot = dg * dots.gs(slot[j]);
            for (int i = j + 1; i < k; i++) {
                dot += dy[i] * dots.ys(slot[i], slot[j]);
            }
            as[j] = dot / h.sy(j);
            if (Double.isNaN(as[j])) {
                throw new SearchFailure("NaN history");
            }
            dy[j] -= as[j];
        }
        dg *= diag;
        for (int i = 0; i < k; i++) {
            dy[i] *= diag;
        }
        for (int j = 0; j < k; j++) {
            double dot = dg * dots.gy(slot[j]);
            for (int i = 0; i < k; i++) {
                dot += dy[i] * dots.yy(slot[i], slot[j]);
            }
            for (int i = 0; i < j; i++) {
                dot += ds[i] * dots.ys(slot[j], slot[i]);
            }
            ds[j] += as[j] - dot / h.sy(j);
        }
        // The direction is minus the combination: negate the coefficients (exact) and sum once, block by
        // block, so the block being written stays in cache while every stored vector is read once.
        final OptimizerState.Vector out = st.dir();
        final OptimizerState.Vector g = st.grad();
        final double cg = -dg;
        final OptimizerState.Vector[] sv = new OptimizerState.Vector[k];
        final OptimizerState.Vector[] yv = new OptimizerState.Vector[k];
        for (int j = 0; j < k; j++) {
            sv[j] = h.s(j);
            yv[j] = h.y(j);
            ds[j] = -ds[j];
            dy[j] = -dy[j];
        }
        // grad . dir for the line search rides along, in element order (the bits of a separate dot product)
        double gd = 0.0;
        for (int b0 = 0; b0 < n; b0 += BLOCK) {
            final int b1 = Math.min(n, b0 + BLOCK);
            for (int i = b0; i < b1; i++) {
                out.set(i, cg * g.get(i));
            }
            for (int j = 0; j < k; j++) {
                final double cs = ds[j];
                final double cy = dy[j];
                final OptimizerState.Vector sj = sv[j];
                final OptimizerState.Vector yj = yv[j];
                for (int i = b0; i < b1; i++) {
                    out.set(i, out.get(i) + (cs * sj.get(i) + cy * yj.get(i)));
                }
            }
            for (int i = b0; i < b1; i++) {
                gd += g.get(i) * out.get(i);
            }
        }
        dots.gradDotDir(gd);
    }

    @Override
    void beginSearch(final OptimizerState st) {
        final double init = st.iterations() == 0 ? 1.0 / st.dir().norm() : 1.0;
        // direction() has just written dir; vector-free with pairs stored, its sweep summed grad . dir
        final double dd = vectorFree && st.pairs() > 0
                ? new Dots(st, m).gradDotDir()
                : st.grad().dot(st.dir());
        search.begin(st, init, Double.POSITIVE_INFINITY, st.value(), dd);
    }

    @Override
    LineSearch searchStep(final OptimizerState st, final double fv, final double dd) {
        return search.step(st, fv, dd);
    }

    @Override
    void afterSearch(final OptimizerState st, final double alpha) {
        if (alpha * adjustedGradientNorm(st) < 1e-10) {
            throw new SearchFailure("step size underflow");
        }
    }

    @Override
    void takeStep(final OptimizerState st, final double alpha, final double[] out) {
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector d = st.dir();
        for (int i = 0; i < n; i++) {
            out[i] = d.get(i) * alpha + x.get(i);
        }
    }

    @Override
    void updateHistory(final OptimizerState st, final double[] newX, final double[] newGrad) {
        if (vectorFree) {
            throw new IllegalStateException("the vector-free form stores pairs only with updateHistoryAndMove");
        }
        new CurvatureHistory(st).pushDifference(newX, newGrad);
    }

    @Override
    void updateHistoryAndMove(final OptimizerState st, final double[] newX, final double[] newGrad) {
        if (vectorFree) {
            pushWithDots(st, newX, newGrad);
        } else {
            super.updateHistoryAndMove(st, newX, newGrad);
        }
    }

    @Override
    double adjustedGradientNorm(final OptimizerState st) {
        // Past iteration 0 the gradient was moved in by a push, which summed its squares; before, it came from
        // the first evaluation.
        return vectorFree && st.iterations() > 0
                ? Math.sqrt(new Dots(st, m).gradSquares())
                : super.adjustedGradientNorm(st);
    }

    /**
     * The vector-free {@link CurvatureHistory#pushDifference}: stores {@code s = newX - x}, {@code y = newGrad -
     * grad} as the newest pair, moves newX and newGrad into x and grad and, in the same sweep, computes the dot
     * products the direction needs ({@code s.y}, {@code y.y}, {@code y} with every stored pair's vectors,
     * {@code newGrad} with every stored vector) and newGrad's sum of squares (for the convergence check).
     */
    private void pushWithDots(final OptimizerState st, final double[] newX, final double[] newGrad) {
        final CurvatureHistory h = new CurvatureHistory(st);
        final int t = h.claimNewest();
        // the claim may have grown the state: every view is taken after it
        final Dots dots = new Dots(st, m);
        final int others = h.size() - 1;
        final OptimizerState.Vector sNew = st.pairS(t);
        final OptimizerState.Vector yNew = st.pairY(t);
        final OptimizerState.Vector x = st.x();
        final OptimizerState.Vector g = st.grad();
        final OptimizerState.Vector[] su = new OptimizerState.Vector[others];
        final OptimizerState.Vector[] yu = new OptimizerState.Vector[others];
        for (int u = 0; u < others; u++) {
            su[u] = h.s(u);
            yu[u] = h.y(u);
        }
        // Per other pair: y.s_u and y.y_u, each summed per block, then in block order. The new gradient's
        // products follow from them, g_new.v = y.v + g_old.v, with g_old.v kept from the last push.
        final double[] acc = new double[2 * others];
        double sy = 0.0;
        double yy = 0.0;
        double gs = 0.0;
        double gy = 0.0;
        double gg = 0.0;
        for (int b0 = 0; b0 < n; b0 += BLOCK) {
            final int b1 = Math.min(n, b0 + BLOCK);
            for (int i = b0; i < b1; i++) {
                final double xv = newX[i];
                final double gv = newGrad[i];
                final double sv = xv - x.get(i);
                final double yv = gv - g.get(i);
                sNew.set(i, sv);
                yNew.set(i, yv);
                x.set(i, xv);
                g.set(i, gv);
                sy += sv * yv;
                yy += yv * yv;
                gs += gv * sv;
                gy += gv * yv;
                gg += gv * gv;
            }
            // two stored pairs per pass: four independent sums, so the additions' latency does not bound it
            int u = 0;
            for (; u + 1 < others; u += 2) {
                final OptimizerState.Vector s1 = su[u];
                final OptimizerState.Vector y1 = yu[u];
                final OptimizerState.Vector s2 = su[u + 1];
                final OptimizerState.Vector y2 = yu[u + 1];
                double a0 = 0.0;
                double a1 = 0.0;
                double a2 = 0.0;
                double a3 = 0.0;
                for (int i = b0; i < b1; i++) {
                    final double yv = yNew.get(i);
                    a0 += yv * s1.get(i);
                    a1 += yv * y1.get(i);
                    a2 += yv * s2.get(i);
                    a3 += yv * y2.get(i);
                }
                acc[2 * u] += a0;
                acc[2 * u + 1] += a1;
                acc[2 * u + 2] += a2;
                acc[2 * u + 3] += a3;
            }
            if (u < others) {
                final OptimizerState.Vector s1 = su[u];
                final OptimizerState.Vector y1 = yu[u];
                double a0 = 0.0;
                double a1 = 0.0;
                for (int i = b0; i < b1; i++) {
                    final double yv = yNew.get(i);
                    a0 += yv * s1.get(i);
                    a1 += yv * y1.get(i);
                }
                acc[2 * u] += a0;
                acc[2 * u + 1] += a1;
            }
        }
        st.pairDots(t, sy, yy);
        dots.yy(t, t, yy);
        for (int u = 0; u < others; u++) {
            final int slot = h.slot(u);
            dots.ys(t, slot, acc[2 * u]);
            dots.yy(t, slot, acc[2 * u + 1]);
            dots.yy(slot, t, acc[2 * u + 1]);
            dots.gs(slot, dots.gs(slot) + acc[2 * u]);
            dots.gy(slot, dots.gy(slot) + acc[2 * u + 1]);
        }
        dots.gs(t, gs);
        dots.gy(t, gy);
        dots.gradSquares(gg);
    }
}

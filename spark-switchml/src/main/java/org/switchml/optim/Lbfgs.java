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
 * 489–612 ms per iteration against 621–647 ms; docs/benchmarks.md, "Where the time goes"). The iterates are those of the
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
    /** Header slots (vector-free): y_t . s_u by ring slots [t * m + u], t newer than u. */
    private final int ys;
    /** y_t . y_u by ring slots [t * m + u] (symmetric). */
    private final int yy;
    /**
     * g . s_u and g . y_u of the state's gradient, by ring slot [2u], [2u + 1]: written for every stored pair
     * by each push, which also moves the gradient in; so they are current whenever a pair is stored.
     */
    private final int gdots;
    /** The sum of squares of the state's gradient, from the push that moved it in (every iteration ends so). */
    private final int gradSquares;
    /** grad . dir, from the sweep that wrote dir. */
    private final int gradDotDir;

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
        super(vectorFree ? 4 : 1, n, m, maxIter, tol, vectorFree ? 2 * m * m + 2 * m + 2 : 0);
        this.vectorFree = vectorFree;
        this.ys = extra;
        this.yy = ys + m * m;
        this.gdots = yy + m * m;
        this.gradSquares = gdots + 2 * m;
        this.gradDotDir = gradSquares + 1;
    }

    /** Strong Wolfe search: up to {@code SEARCH_STEPS} trials, then up to as many zoom steps. */
    @Override
    public int maxEvaluationsPerSearch() {
        return 2 * SEARCH_STEPS;
    }

    /** Whether the direction is computed vector-free. */
    public boolean vectorFree() {
        return vectorFree;
    }

    @Override
    int vectors() {
        return 3;
    }

    @Override
    void direction(final double[] s) {
        if (!vectorFree || s[PAIRS] == 0) {
            twoLoop(s, gradOff(), dirOff());
            return;
        }
        final int k = (int) s[PAIRS];
        final double sy = pairSy(s, k - 1);
        if (sy < 0 || Double.isNaN(sy)) {
            throw new SearchFailure("NaN history");
        }
        final double diag = sy / pairYy(s, k - 1);
        final int[] slot = new int[k];
        for (int j = 0; j < k; j++) {
            slot[j] = slot(s, j);
        }
        // dir = dg * g + sum_j (ds[j] * s_j + dy[j] * y_j), pairs by age (0 oldest); the recursion of twoLoop
        // on these coefficients. Only the products it needs are kept: y_i . s_j with i newer than j (first
        // loop: the y of newer pairs against s_j; second loop: s of older pairs against y_j), y_i . y_j, g . *.
        double dg = 1.0;
        final double[] ds = new double[k];
        final double[] dy = new double[k];
        final double[] as = new double[k];
        for (int j = k - 1; j >= 0; j--) {
            double dot = dg * s[gdots + 2 * slot[j]];
            for (int i = j + 1; i < k; i++) {
                dot += dy[i] * s[ys + slot[i] * m + slot[j]];
            }
            as[j] = dot / pairSy(s, j);
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
            double dot = dg * s[gdots + 2 * slot[j] + 1];
            for (int i = 0; i < k; i++) {
                dot += dy[i] * s[yy + slot[i] * m + slot[j]];
            }
            for (int i = 0; i < j; i++) {
                dot += ds[i] * s[ys + slot[j] * m + slot[i]];
            }
            ds[j] += as[j] - dot / pairSy(s, j);
        }
        // The direction is minus the combination: negate the coefficients (exact) and sum once, block by
        // block, so the block being written stays in cache while every stored vector is read once.
        final int out = dirOff();
        final int g = gradOff();
        final double cg = -dg;
        final int[] off = new int[k];
        for (int j = 0; j < k; j++) {
            off[j] = pairOff(s, j);
            ds[j] = -ds[j];
            dy[j] = -dy[j];
        }
        // grad . dir for the line search rides along, in element order (the bits of a separate dot product)
        double gd = 0.0;
        for (int b0 = 0; b0 < n; b0 += BLOCK) {
            final int b1 = Math.min(n, b0 + BLOCK);
            for (int i = b0; i < b1; i++) {
                s[out + i] = cg * s[g + i];
            }
            for (int j = 0; j < k; j++) {
                final double cs = ds[j];
                final double cy = dy[j];
                final int so = off[j];
                final int yo = so + n;
                for (int i = b0; i < b1; i++) {
                    s[out + i] += cs * s[so + i] + cy * s[yo + i];
                }
            }
            for (int i = b0; i < b1; i++) {
                gd += s[g + i] * s[out + i];
            }
        }
        s[gradDotDir] = gd;
    }

    @Override
    void beginSearch(final double[] s) {
        final double init = s[ITER] == 0 ? 1.0 / norm(s, dirOff(), n) : 1.0;
        // direction() has just written dir; vector-free with pairs stored, its sweep summed grad . dir
        final double dd = vectorFree && s[PAIRS] > 0 ? s[gradDotDir] : dot(s, gradOff(), s, dirOff(), n);
        beginStrongWolfe(s, init, Double.POSITIVE_INFINITY, s[VALUE], dd);
    }

    @Override
    int searchStep(final double[] s, final double fv, final double dd) {
        return strongWolfeStep(s, fv, dd, SEARCH_STEPS, SEARCH_STEPS);
    }

    @Override
    void afterSearch(final double[] s, final double alpha) {
        if (alpha * adjustedGradientNormOf(s) < 1e-10) {
            throw new SearchFailure("step size underflow");
        }
    }

    @Override
    void takeStep(final double[] s, final double alpha, final double[] out) {
        final int x = xOff();
        final int d = dirOff();
        for (int i = 0; i < n; i++) {
            out[i] = s[d + i] * alpha + s[x + i];
        }
    }

    @Override
    double[] updateHistory(final double[] s, final double[] newX, final double[] newGrad) {
        if (vectorFree) {
            throw new IllegalStateException("the vector-free form stores pairs only with updateHistoryAndMove");
        }
        return pushDifferencePair(s, newX, newGrad);
    }

    @Override
    double[] updateHistoryAndMove(final double[] s, final double[] newX, final double[] newGrad) {
        return vectorFree ? pushWithDots(s, newX, newGrad) : super.updateHistoryAndMove(s, newX, newGrad);
    }

    @Override
    double adjustedGradientNormOf(final double[] s) {
        // Past iteration 0 the gradient was moved in by a push, which summed its squares; before, it came from
        // the first evaluation.
        return vectorFree && s[ITER] > 0 ? Math.sqrt(s[gradSquares]) : super.adjustedGradientNormOf(s);
    }

    /**
     * The vector-free {@code pushDifferencePair}: stores {@code s = newX - x}, {@code y = newGrad - grad} as
     * the newest pair, moves newX and newGrad into x and grad and, in the same sweep, computes the dot
     * products the direction needs ({@code s.y}, {@code y.y}, {@code y} with every stored pair's vectors,
     * {@code newGrad} with every stored vector) and newGrad's sum of squares (for the convergence check).
     */
    private double[] pushWithDots(double[] s, final double[] newX, final double[] newGrad) {
        s = claimNewestPair(s);
        final int k = (int) s[PAIRS];
        final int t = slot(s, k - 1);
        final int so = pairOff(s, k - 1);
        final int yo = so + n;
        final int x = xOff();
        final int g = gradOff();
        final int others = k - 1;
        final int[] uo = new int[others];
        for (int u = 0; u < others; u++) {
            uo[u] = pairOff(s, u);
        }
        // Per other pair: y.s_u and y.y_u, each summed per block, then in block order. The new gradient's
        // products follow from them, g_new.v = y.v + g_old.v, with g_old.v kept from the last push.
        final double[] acc = new double[2 * others];
        double sy = 0.0;
        double yy2 = 0.0;
        double gs = 0.0;
        double gy = 0.0;
        double gg = 0.0;
        for (int b0 = 0; b0 < n; b0 += BLOCK) {
            final int b1 = Math.min(n, b0 + BLOCK);
            for (int i = b0; i < b1; i++) {
                final double xv = newX[i];
                final double gv = newGrad[i];
                final double sv = xv - s[x + i];
                final double yv = gv - s[g + i];
                s[so + i] = sv;
                s[yo + i] = yv;
                s[x + i] = xv;
                s[g + i] = gv;
                sy += sv * yv;
                yy2 += yv * yv;
                gs += gv * sv;
                gy += gv * yv;
                gg += gv * gv;
            }
            // two stored pairs per pass: four independent sums, so the additions' latency does not bound it
            int u = 0;
            for (; u + 1 < others; u += 2) {
                final int s1 = uo[u];
                final int y1 = s1 + n;
                final int s2 = uo[u + 1];
                final int y2 = s2 + n;
                double a0 = 0.0;
                double a1 = 0.0;
                double a2 = 0.0;
                double a3 = 0.0;
                for (int i = b0; i < b1; i++) {
                    final double yv = s[yo + i];
                    a0 += yv * s[s1 + i];
                    a1 += yv * s[y1 + i];
                    a2 += yv * s[s2 + i];
                    a3 += yv * s[y2 + i];
                }
                acc[2 * u] += a0;
                acc[2 * u + 1] += a1;
                acc[2 * u + 2] += a2;
                acc[2 * u + 3] += a3;
            }
            if (u < others) {
                final int s1 = uo[u];
                final int y1 = s1 + n;
                double a0 = 0.0;
                double a1 = 0.0;
                for (int i = b0; i < b1; i++) {
                    final double yv = s[yo + i];
                    a0 += yv * s[s1 + i];
                    a1 += yv * s[y1 + i];
                }
                acc[2 * u] += a0;
                acc[2 * u + 1] += a1;
            }
        }
        final int pd = pairDotsOffset(t);
        s[pd] = sy;
        s[pd + 1] = yy2;
        s[yy + t * m + t] = yy2;
        for (int u = 0; u < others; u++) {
            final int su = slot(s, u);
            s[ys + t * m + su] = acc[2 * u];
            s[yy + t * m + su] = acc[2 * u + 1];
            s[yy + su * m + t] = acc[2 * u + 1];
            s[gdots + 2 * su] += acc[2 * u];
            s[gdots + 2 * su + 1] += acc[2 * u + 1];
        }
        s[gdots + 2 * t] = gs;
        s[gdots + 2 * t + 1] = gy;
        s[gradSquares] = gg;
        return s;
    }
}

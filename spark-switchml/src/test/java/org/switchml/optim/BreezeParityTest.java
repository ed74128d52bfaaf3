package org.switchml.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import breeze.linalg.DenseMatrix$;
import breeze.linalg.DenseVector;
import breeze.linalg.DenseVector$;
import breeze.optimize.CachedDiffFunction;
import breeze.optimize.DiffFunction;
import breeze.optimize.DiffFunction$;
import breeze.optimize.FirstOrderMinimizer;
import breeze.optimize.LBFGS;
import breeze.optimize.LBFGSB;
import breeze.optimize.OWLQN;
import breeze.optimize.proximal.LogisticGenerator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.switchml.testing.Seeds;
import scala.Function1;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;

/**
 * The step machines against breeze 2.1.0 itself, without Spark: breeze's own logistic cost
 * ({@code proximal.LogisticGenerator.Cost}, a sum of log losses over a dense matrix) is minimized by
 * breeze's LBFGS / OWLQN / LBFGSB from Java and by our machines with the same cost written in Java.
 * Every emitted state must agree (objective history, iteration count), and so must the solution.
 */
class BreezeParityTest {

    /** A seeded problem: rows of Gaussian features (column scales vary), labels from a noisy linear model. */
    private record Problem(int rows, int cols, double[] data, double[] labels) {
        static Problem generate(final long seed, final int rows, final int cols, final double noise) {
            final SplittableRandom rnd = new SplittableRandom(seed);
            final double[] w = new double[cols];
            final double[] scale = new double[cols];
            for (int j = 0; j < cols; j++) {
                w[j] = rnd.nextGaussian();
                scale[j] = Math.pow(10, rnd.nextDouble() - 0.5);
            }
            final double[] data = new double[rows * cols]; // column-major, as breeze's DenseMatrix
            final double[] labels = new double[rows];
            for (int i = 0; i < rows; i++) {
                double m = 0;
                for (int j = 0; j < cols; j++) {
                    final double x = rnd.nextGaussian() * scale[j];
                    data[j * rows + i] = x;
                    m += w[j] * x;
                }
                labels[i] = m + noise * rnd.nextGaussian() > 0 ? 1.0 : 0.0;
            }
            return new Problem(rows, cols, data, labels);
        }

        DiffFunction<DenseVector<Object>> breeze(final double l2) {
            final DiffFunction<DenseVector<Object>> cost = new LogisticGenerator.Cost(
                    DenseMatrix$.MODULE$.create(rows, cols, data.clone(), 0, rows, false), dv(labels));
            return l2 == 0
                    ? cost
                    : DiffFunction$.MODULE$.withL2Regularization(cost, l2, DenseVector$.MODULE$.space_Double());
        }

        /** The same function in Java: sum of log losses, plus l2/2 |x|^2. */
        double value(final double[] x, final double[] grad, final double l2) {
            double loss = 0;
            for (int i = 0; i < rows; i++) {
                double dot = 0;
                for (int j = 0; j < cols; j++) {
                    dot += x[j] * data[j * rows + i];
                }
                final double margin = -1.0 * dot;
                final double mult = 1.0 / (1.0 + Math.exp(margin)) - labels[i];
                for (int j = 0; j < cols; j++) {
                    grad[j] += data[j * rows + i] * mult;
                }
                loss += labels[i] > 0 ? Math.log1p(Math.exp(margin)) : Math.log1p(Math.exp(margin)) - margin;
            }
            if (l2 != 0) {
                double sq = 0;
                for (int j = 0; j < cols; j++) {
                    sq += x[j] * x[j];
                    grad[j] += x[j] * l2;
                }
                loss += l2 * sq / 2;
            }
            return loss;
        }
    }

    private static DenseVector<Object> dv(final double[] x) {
        return DenseVector$.MODULE$.apply$mDc$sp(x.clone());
    }

    private static double[] array(final Object v) {
        @SuppressWarnings("unchecked")
        final DenseVector<Object> d = (DenseVector<Object>) v;
        return d.toArray$mcD$sp(ClassTag$.MODULE$.Double());
    }

    /** breeze's emitted states: adjusted values, and the last x and iter. */
    private record BreezeRun(double[] history, double[] x, int iter) {}

    @SuppressWarnings({"rawtypes", "unchecked"})
    private static BreezeRun breeze(
            final FirstOrderMinimizer opt, final DiffFunction<DenseVector<Object>> f, final double[] x0) {
        final CachedDiffFunction<DenseVector<Object>> cached =
                new CachedDiffFunction<>(f, DenseVector$.MODULE$.canCopyDenseVector(ClassTag$.MODULE$.Double()));
        final Iterator<FirstOrderMinimizer.State> it = opt.iterations(cached, dv(x0));
        final List<Double> values = new ArrayList<>();
        FirstOrderMinimizer.State last = null;
        while (it.hasNext()) {
            last = it.next();
            values.add(last.adjustedValue());
        }
        return new BreezeRun(values.stream().mapToDouble(Double::doubleValue).toArray(), array(last.x()), last.iter());
    }

    private static void compare(
            final String name, final BreezeRun b, final QuasiNewton opt, final double[] state, final double tolerance) {
        final double[] h = opt.objectiveHistory(state);
        final double[] x = opt.solution(state);
        System.out.printf(
                "[breeze-parity] %s: breeze %d states (iter %d), ours %d states (iter %d, %s, %d evaluations);"
                        + " final objective %.17g vs %.17g; x rel diff %.2e%n",
                name,
                b.history().length,
                b.iter(),
                h.length,
                opt.iterations(state),
                opt.reason(state),
                opt.evaluations(state),
                b.history()[b.history().length - 1],
                h[h.length - 1],
                relDiff(b.x(), x));
        for (int i = 0; i < Math.min(h.length, b.history().length); i++) {
            assertEquals(b.history()[i], h[i], tolerance * Math.abs(b.history()[i]) + 1e-300, name + ": state " + i);
        }
        assertEquals(b.history().length, h.length, name + ": states");
        assertEquals(b.iter(), opt.iterations(state), name + ": iterations");
        assertTrue(relDiff(b.x(), x) < 1e3 * tolerance, name + ": x rel diff " + relDiff(b.x(), x));
    }

    private static double relDiff(final double[] a, final double[] b) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < a.length; i++) {
            num += (a[i] - b[i]) * (a[i] - b[i]);
            den += a[i] * a[i];
        }
        return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-300);
    }

    private static void lbfgs(
            final String name,
            final Problem p,
            final double l2,
            final int m,
            final int maxIter,
            final double tol,
            final double[] x0,
            final boolean vectorFree) {
        final BreezeRun b = breeze(
                new LBFGS<DenseVector<Object>>(maxIter, m, tol, DenseVector$.MODULE$.space_Double()), p.breeze(l2), x0);
        final Lbfgs ours = new Lbfgs(p.cols(), m, maxIter, tol, vectorFree);
        // The vector-free form rounds differently; the nearly separable case ends at 1e-5 of its start, where the
        // last states differ at ~2e-10 relative.
        compare(name, b, ours, ours.minimize((x, g) -> p.value(x, g, l2), x0), vectorFree ? 1e-9 : 1e-10);
    }

    @Test
    void lbfgsOnSeveralProblems() {
        lbfgsCases("BreezeParityTest.lbfgs", false);
    }

    /**
     * The vector-free direction (what models of {@link Lbfgs#VECTOR_FREE_MIN} coefficients or more use) on the
     * same problems: not the same bits as breeze's two loops, but the same number of states, each within 1e-9.
     */
    @Test
    void vectorFreeLbfgsOnSeveralProblems() {
        lbfgsCases("BreezeParityTest.lbfgs-vector-free", true);
    }

    private static void lbfgsCases(final String test, final boolean vf) {
        final long seed = Seeds.seed(test, 101);
        final String v = vf ? " (vector-free)" : "";
        lbfgs("lbfgs-l2" + v, Problem.generate(seed, 300, 20, 1.0), 1.0, 10, 100, 1e-6, new double[20], vf);
        lbfgs("lbfgs-m3-tol1e-9" + v, Problem.generate(seed + 1, 200, 15, 0.5), 0.1, 3, 200, 1e-9, new double[15], vf);
        lbfgs("lbfgs-maxiter-7" + v, Problem.generate(seed + 2, 200, 15, 0.5), 0.1, 10, 7, 1e-9, new double[15], vf);
        lbfgs("lbfgs-maxiter-0" + v, Problem.generate(seed + 3, 50, 5, 0.5), 0.1, 10, 0, 1e-6, new double[5], vf);
        // nearly separable, unregularized: long steps, the line search's zoom and overflowing losses
        final double[] far = new double[12];
        Arrays.fill(far, 3.0);
        lbfgs("lbfgs-separable-far-start" + v, Problem.generate(seed + 4, 200, 12, 0.01), 0.0, 10, 100, 1e-6, far, vf);
    }

    private static void owlqn(
            final String name,
            final Problem p,
            final double l2,
            final double[] l1,
            final int maxIter,
            final double tol) {
        final double[] x0 = new double[p.cols()];
        final Function1<Object, Object> fn = i -> l1[(Integer) i];
        final BreezeRun b = breeze(
                new OWLQN<Object, DenseVector<Object>>(maxIter, 10, fn, tol, DenseVector$.MODULE$.space_Double()),
                p.breeze(l2),
                x0);
        final Owlqn ours = new Owlqn(p.cols(), 10, maxIter, tol, i -> l1[i]);
        compare(name, b, ours, ours.minimize((x, g) -> p.value(x, g, l2), x0), 1e-10);
    }

    @Test
    void owlqnOnSeveralProblems() {
        final long seed = Seeds.seed("BreezeParityTest.owlqn", 202);
        final double[] l1 = new double[25];
        Arrays.fill(l1, 2.0);
        l1[0] = 0.0; // an unpenalized coordinate, as MLlib's intercept
        owlqn("owlqn-l1", Problem.generate(seed, 300, 25, 1.0), 0.0, l1, 100, 1e-6);
        owlqn("owlqn-elastic", Problem.generate(seed + 1, 300, 25, 1.0), 0.5, l1, 100, 1e-6);
        final double[] strong = new double[25];
        Arrays.fill(strong, 20.0);
        owlqn("owlqn-strong-l1", Problem.generate(seed + 2, 300, 25, 1.0), 0.0, strong, 100, 1e-6);
        final double[] mixed = new double[25];
        for (int i = 0; i < mixed.length; i++) {
            mixed[i] = i % 3 == 0 ? 0.0 : 0.5 * i;
        }
        owlqn("owlqn-mixed-weights", Problem.generate(seed + 3, 300, 25, 0.3), 0.1, mixed, 60, 1e-8);
    }

    private static void lbfgsb(
            final String name,
            final Problem p,
            final double l2,
            final double[] lower,
            final double[] upper,
            final int maxIter) {
        final double[] x0 = new double[p.cols()];
        for (int i = 0; i < x0.length; i++) {
            x0[i] = Math.min(Math.max(0.0, lower[i]), upper[i]);
        }
        final BreezeRun b = breeze(new LBFGSB(dv(lower), dv(upper), maxIter, 10, 1e-6, 64, 64), p.breeze(l2), x0);
        final Lbfgsb ours = new Lbfgsb(lower, upper, 10, maxIter, 1e-6);
        compare(name, b, ours, ours.minimize((x, g) -> p.value(x, g, l2), x0), 1e-9);
    }

    @Test
    void lbfgsbOnSeveralProblems() {
        final long seed = Seeds.seed("BreezeParityTest.lbfgsb", 303);
        final int n = 20;
        final double[] lo = new double[n];
        final double[] hi = new double[n];
        Arrays.fill(lo, Double.NEGATIVE_INFINITY);
        Arrays.fill(hi, Double.POSITIVE_INFINITY);
        lbfgsb("lbfgsb-unbounded", Problem.generate(seed, 300, n, 1.0), 1.0, lo, hi, 100);
        final double[] nonNeg = new double[n];
        lbfgsb("lbfgsb-nonnegative", Problem.generate(seed + 1, 300, n, 1.0), 1.0, nonNeg, hi, 100);
        final double[] boxLo = new double[n];
        final double[] boxHi = new double[n];
        for (int i = 0; i < n; i++) {
            boxLo[i] = i % 2 == 0 ? -0.2 : Double.NEGATIVE_INFINITY;
            boxHi[i] = i % 3 == 0 ? 0.3 : Double.POSITIVE_INFINITY;
        }
        lbfgsb("lbfgsb-box", Problem.generate(seed + 2, 300, n, 0.5), 0.3, boxLo, boxHi, 100);
    }
}

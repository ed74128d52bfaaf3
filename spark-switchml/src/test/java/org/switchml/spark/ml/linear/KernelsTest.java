package org.switchml.spark.ml.linear;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.DoubleSupplier;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.junit.jupiter.api.Test;
import org.switchml.testing.Seeds;

/**
 * Each loss's kernels against MLlib's own block aggregator on the same blocks of rows, no Spark session: the kernel
 * sums unscaled rows with the effective coefficients, MLlib's aggregator the rows scaled by 1/std, and both must give
 * the same gradient sum (training space, virtually centered or not), loss sum and weight sum. Each objective here
 * runs the kernel under test only: the other slot fails the test if it is called. Logistic and softmax are
 * LogisticRegression's, hinge LinearSVC's, the squared error LinearRegression's (with its centered, scaled label).
 */
class KernelsTest {
    private static final int FEATURES = 9;
    private static final BlockKernel<InstanceBatch> NO_DENSE = (b, p, s) -> {
        throw new AssertionError("dense kernel called");
    };
    private static final BlockKernel<ColumnBlock> NO_SPARSE = (b, p, s) -> {
        throw new AssertionError("sparse kernel called");
    };

    @Test
    void binaryDenseKernelMatchesBinaryLogisticBlockAggregator() {
        logistic("binary-dense", 2, false, 1.0, new BinaryDenseKernel(new LogisticLoss()), NO_SPARSE, 0xB1D);
    }

    @Test
    void binarySparseKernelMatchesBinaryLogisticBlockAggregator() {
        logistic("binary-sparse", 2, false, 0.15, NO_DENSE, new BinarySparseKernel(new LogisticLoss()), 0xB15);
    }

    @Test
    void multinomialDenseKernelMatchesMultinomialLogisticBlockAggregator() {
        logistic("multinomial-dense", 4, true, 1.0, new MultinomialDenseKernel(), NO_SPARSE, 0x3D);
    }

    @Test
    void multinomialSparseKernelMatchesMultinomialLogisticBlockAggregator() {
        logistic("multinomial-sparse", 3, true, 0.15, NO_DENSE, new MultinomialSparseKernel(), 0x35);
    }

    @Test
    void hingeKernelsMatchHingeBlockAggregator() {
        hinge("hinge-dense", 1.0, new BinaryDenseKernel(new HingeLoss()), NO_SPARSE, 0x41D);
        hinge("hinge-sparse", 0.15, NO_DENSE, new BinarySparseKernel(new HingeLoss()), 0x415);
    }

    @Test
    void squaredErrorKernelsMatchLeastSquaresBlockAggregator() {
        squared("squared-dense", 1.0, true, 0x5D);
        squared("squared-sparse", 0.15, false, 0x55);
    }

    /** Rows of one draw: our unscaled batches and MLlib's scaled blocks of the same rows. */
    private record Rows(List<InstanceBatch> batches, List<List<Instance>> blocks, double[][] derived) {}

    /** Four blocks of 40 rows of the given density, labels from {@code label}, a few of weight 0. */
    private static Rows rows(
            final String name, final SplittableRandom rnd, final double density, final DoubleSupplier label) {
        final double[] mean = new double[FEATURES];
        final double[] std = new double[FEATURES];
        for (int j = 0; j < FEATURES; j++) {
            mean[j] = rnd.nextDouble(-3, 3);
            std[j] = j == 4 ? 0.0 : rnd.nextDouble(0.1, 4); // a constant feature: 1/std is 0
        }
        final double[][] derived = Standardization.derive(mean, std);
        final List<List<Instance>> blocks = new ArrayList<>();
        final List<InstanceBatch> batches = new ArrayList<>();
        for (int b = 0; b < 4; b++) {
            final InstanceBatch.Builder builder = new InstanceBatch.Builder(FEATURES, 40);
            final List<Instance> scaled = new ArrayList<>();
            for (int r = 0; r < 40; r++) {
                final double[] x = new double[FEATURES];
                final double[] xs = new double[FEATURES];
                for (int j = 0; j < FEATURES; j++) {
                    if (density >= 1 || rnd.nextDouble() < density) {
                        x[j] = mean[j] + (std[j] == 0 ? 0 : std[j] * rnd.nextGaussian()) + (j == 4 ? 2.5 : 0);
                        xs[j] = x[j] * derived[0][j];
                    }
                }
                final double y = label.getAsDouble();
                final double weight = r % 11 == 0 ? 0.0 : rnd.nextDouble(0.25, 2.25);
                builder.addDense(y, weight, x);
                scaled.add(new Instance(
                        y,
                        weight,
                        density >= 1 ? Vectors.dense(xs) : Vectors.dense(xs).compressed()));
            }
            final InstanceBatch batch = builder.build();
            assertEquals(density >= 1, batch.indices == null, name + ": the batches' layout");
            batches.add(batch);
            blocks.add(scaled);
        }
        return new Rows(batches, blocks, derived);
    }

    private static double[] point(final SplittableRandom rnd, final int dim, final int point) {
        final double[] coef = new double[dim];
        for (int i = 0; i < coef.length; i++) {
            coef[i] = rnd.nextGaussian() * (point + 1) * 0.5;
        }
        return coef;
    }

    /** The kernel under test ({@code dense} or {@code sparse}) on the rows, in every intercept setting. */
    private static void logistic(
            final String name,
            final int classes,
            final boolean multinomial,
            final double density,
            final BlockKernel<InstanceBatch> dense,
            final BlockKernel<ColumnBlock> sparse,
            final long defaultSeed) {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("KernelsTest." + name, defaultSeed));
        final Rows rows = rows(name, rnd, density, () -> rnd.nextInt(classes));
        final int sets = multinomial ? classes : 1;
        for (final boolean fitIntercept : new boolean[] {false, true}) {
            for (final boolean fitWithMean : new boolean[] {false, true}) {
                if (fitWithMean && !fitIntercept) {
                    continue;
                }
                final CoefficientLayout layout = new CoefficientLayout(FEATURES, sets, fitIntercept);
                final LinearObjective objective = objective(layout, rows, fitWithMean, dense, sparse);
                for (int point = 0; point < 2; point++) {
                    final double[] coef = point(rnd, layout.dim(), point);
                    assertSame(
                            name + " fitIntercept=" + fitIntercept + " fitWithMean=" + fitWithMean + " point " + point,
                            objective.contribution(rows.batches(), coef),
                            MllibAggregators.logistic(
                                    multinomial,
                                    rows.derived()[0],
                                    rows.derived()[1],
                                    fitIntercept,
                                    fitWithMean,
                                    coef,
                                    rows.blocks()),
                            layout.dim());
                }
            }
        }
    }

    private static void hinge(
            final String name,
            final double density,
            final BlockKernel<InstanceBatch> dense,
            final BlockKernel<ColumnBlock> sparse,
            final long defaultSeed) {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("KernelsTest." + name, defaultSeed));
        final Rows rows = rows(name, rnd, density, () -> rnd.nextInt(2));
        for (final boolean fitIntercept : new boolean[] {false, true}) {
            // LinearSVC centers virtually whenever it fits the intercept
            final CoefficientLayout layout = new CoefficientLayout(FEATURES, 1, fitIntercept);
            final LinearObjective objective = objective(layout, rows, fitIntercept, dense, sparse);
            for (int point = 0; point < 2; point++) {
                // small coefficients leave most rows inside the margin, larger ones put some outside
                final double[] coef = point(rnd, layout.dim(), point);
                assertSame(
                        name + " fitIntercept=" + fitIntercept + " point " + point,
                        objective.contribution(rows.batches(), coef),
                        MllibAggregators.hinge(rows.derived()[0], rows.derived()[1], fitIntercept, coef, rows.blocks()),
                        layout.dim());
            }
        }
    }

    private static void squared(final String name, final double density, final boolean dense, final long defaultSeed) {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("KernelsTest." + name, defaultSeed));
        final Rows rows = rows(name, rnd, density, () -> 3.0 + 2.0 * rnd.nextGaussian());
        final double labelMean = 3.1;
        final double labelStd = 1.9;
        for (final boolean fitIntercept : new boolean[] {false, true}) {
            final Standardization scaling = Standardization.of(rows.derived()[0], rows.derived()[1], rows.derived()[2]);
            final LeastSquaresObjective full =
                    LeastSquaresObjective.of(FEATURES, fitIntercept, labelMean, labelStd, 0.0, true, scaling);
            // the kernel under test only, behind the objective's offsets (the centered label)
            final LinearObjective objective =
                    new LinearObjective(
                            full.layout(),
                            scaling,
                            false,
                            dense ? new BinaryDenseKernel(new SquaredLoss(labelStd)) : NO_DENSE,
                            dense ? NO_SPARSE : new BinarySparseKernel(new SquaredLoss(labelStd)),
                            new L2Regularization(0.0, true, full.layout(), scaling)) {
                        private static final long serialVersionUID = 1L;

                        @Override
                        double[] offsets(final double[] coef) {
                            return full.offsets(coef);
                        }
                    };
            for (int point = 0; point < 2; point++) {
                final double[] coef = point(rnd, full.dim(), point);
                final String what = name + " fitIntercept=" + fitIntercept + " point " + point;
                final double[] ours = objective.contribution(rows.batches(), coef);
                assertSame(
                        what,
                        ours,
                        MllibAggregators.leastSquares(
                                rows.derived()[0],
                                rows.derived()[1],
                                fitIntercept,
                                labelStd,
                                labelMean,
                                coef,
                                rows.blocks()),
                        full.dim());
                // the objective as the estimator builds it gives the same sums as its kernel under test
                final double[] whole = full.contribution(rows.batches(), coef);
                for (int i = 0; i < whole.length; i++) {
                    assertEquals(ours[i], whole[i], 1e-12 * Math.max(1, Math.abs(ours[i])), what + ": element " + i);
                }
            }
        }
    }

    private static LinearObjective objective(
            final CoefficientLayout layout,
            final Rows rows,
            final boolean fitWithMean,
            final BlockKernel<InstanceBatch> dense,
            final BlockKernel<ColumnBlock> sparse) {
        final Standardization scaling = Standardization.of(rows.derived()[0], rows.derived()[1], rows.derived()[2]);
        return new LinearObjective(
                layout, scaling, fitWithMean, dense, sparse, new L2Regularization(0.0, true, layout, scaling));
    }

    /** Our contribution {@code ours} has MLlib's sums within 1e-12 of their scale, and they are not trivial. */
    private static void assertSame(
            final String what, final double[] ours, final MllibAggregators.Sums mllib, final int dim) {
        assertNotNull(mllib.gradient());
        assertEquals(dim, mllib.gradient().length, what + ": gradient length");
        assertEquals(0.0, ours[dim + 2], what + ": no flag");
        assertEquals(mllib.weight(), ours[dim + 1], 1e-12 * mllib.weight(), what + ": weight sum");
        assertEquals(mllib.loss(), ours[dim], 1e-12 * Math.abs(mllib.loss()), what + ": loss sum");
        double scale = 0;
        for (final double g : mllib.gradient()) {
            scale = Math.max(scale, Math.abs(g));
        }
        // the sums are not trivially equal: real rows with weight, loss and gradient
        assertTrue(mllib.weight() > 0 && mllib.loss() > 0 && scale > 0, what + ": empty sums");
        for (int i = 0; i < dim; i++) {
            assertEquals(mllib.gradient()[i], ours[i], 1e-12 * scale, what + ": gradient[" + i + "]");
        }
    }
}

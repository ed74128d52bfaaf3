package org.switchml.spark.ml.classification;

import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.junit.jupiter.api.Test;
import org.switchml.testing.Seeds;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each logistic kernel against MLlib's own block aggregator on the same blocks of rows, no Spark session: the
 * kernel sums unscaled rows with the effective coefficients, MLlib's aggregator the rows scaled by 1/std, and
 * both must give the same gradient sum (training space, virtually centered or not), loss sum and weight sum.
 * Each objective here runs the kernel under test only: the other slot fails the test if it is called.
 */
class LogisticKernelsTest {
    private static final int FEATURES = 9;

    @Test
    void binaryDenseKernelMatchesBinaryLogisticBlockAggregator() {
        check("binary-dense", 2, false, 1.0, new BinaryDenseKernel(new LogisticLoss()), null, 0xB1D);
    }

    @Test
    void binarySparseKernelMatchesBinaryLogisticBlockAggregator() {
        check("binary-sparse", 2, false, 0.15, null, new BinarySparseKernel(new LogisticLoss()), 0xB15);
    }

    @Test
    void multinomialDenseKernelMatchesMultinomialLogisticBlockAggregator() {
        check("multinomial-dense", 4, true, 1.0, new MultinomialDenseKernel(), null, 0x3D);
    }

    @Test
    void multinomialSparseKernelMatchesMultinomialLogisticBlockAggregator() {
        check("multinomial-sparse", 3, true, 0.15, null, new MultinomialSparseKernel(), 0x35);
    }

    /** The kernel ({@code dense} or {@code sparse}) on rows of the given density, in every intercept setting. */
    private static void check(final String name, final int classes, final boolean multinomial, final double density,
                              final BlockKernel<InstanceBatch> dense, final BlockKernel<ColumnBlock> sparse,
                              final long defaultSeed) {
        final long seed = Seeds.seed("LogisticKernelsTest." + name, defaultSeed);
        final SplittableRandom rnd = new SplittableRandom(seed);
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
                final double label = rnd.nextInt(classes);
                final double weight = r % 11 == 0 ? 0.0 : rnd.nextDouble(0.25, 2.25);
                builder.addDense(label, weight, x);
                scaled.add(new Instance(label, weight, density >= 1 ? Vectors.dense(xs) : Vectors.dense(xs).compressed()));
            }
            final InstanceBatch batch = builder.build();
            assertEquals(density >= 1, batch.indices == null, name + ": the batches' layout");
            batches.add(batch);
            blocks.add(scaled);
        }
        final int sets = multinomial ? classes : 1;
        for (final boolean fitIntercept : new boolean[] {false, true}) {
            for (final boolean fitWithMean : new boolean[] {false, true}) {
                if (fitWithMean && !fitIntercept) {
                    continue;
                }
                final CoefficientLayout layout = new CoefficientLayout(FEATURES, sets, fitIntercept);
                final Standardization scaling = Standardization.of(derived[0], derived[1], derived[2]);
                final LinearObjective objective = new LinearObjective(layout, scaling, fitWithMean,
                        dense != null ? dense : (b, p, s) -> { throw new AssertionError("dense kernel called"); },
                        sparse != null ? sparse : (b, p, s) -> { throw new AssertionError("sparse kernel called"); },
                        new L2Regularization(0.0, true, layout, scaling));
                for (int point = 0; point < 2; point++) {
                    final double[] coef = new double[layout.dim()];
                    for (int i = 0; i < coef.length; i++) {
                        coef[i] = rnd.nextGaussian() * (point + 1) * 0.5;
                    }
                    final String what = name + " fitIntercept=" + fitIntercept + " fitWithMean=" + fitWithMean
                            + " point " + point;
                    final double[] ours = objective.contribution(batches, coef);
                    final MllibAggregators.Sums mllib = MllibAggregators.logistic(multinomial, derived[0], derived[1],
                            fitIntercept, fitWithMean, coef, blocks);
                    assertNotNull(mllib.gradient());
                    final int dim = layout.dim();
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
        }
    }
}

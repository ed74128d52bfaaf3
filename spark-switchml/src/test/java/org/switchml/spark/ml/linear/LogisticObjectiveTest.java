package org.switchml.spark.ml.linear;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.testing.Seeds;

/** The parts of the objective the MLlib oracle does not reach. */
class LogisticObjectiveTest {

    private static LogisticObjective binary() {
        return new LogisticObjective(
                2, 2, false, true, false, new double[] {1, 1}, new double[] {0, 0}, 0.0, true, new double[] {1, 1});
    }

    @Test
    void aNonFinitePartitionSendsOnlyTheFlagAndTheObjectiveIsInfinite() {
        final InstanceBatch.Builder b = new InstanceBatch.Builder(2, 8);
        b.addDense(1, 1, new double[] {1e300, 1e300});
        b.addDense(0, 1, new double[] {-1e300, 1e300});
        final LogisticObjective obj = binary();
        final double[] coef = {1e10, -1e10, 0};
        final double[] v = obj.contribution(List.of(b.build()), coef);
        for (int i = 0; i < obj.dim() + 1; i++) {
            assertEquals(0.0, v[i], "element " + i + " must be zeroed");
        }
        assertEquals(2.0, v[obj.dim() + 1], "the weight still counts");
        assertEquals(LogisticObjective.NON_FINITE, v[obj.dim() + 2]);
        final double[] sum = v.clone();
        final double[] finite = obj.contribution(List.of(), coef);
        for (int i = 0; i < sum.length; i++) {
            sum[i] += finite[i];
        }
        final double[] grad = new double[obj.dim()];
        assertEquals(Double.POSITIVE_INFINITY, obj.valueAndGradient(sum, coef, grad));
        assertTrue(Double.isNaN(grad[0]));
    }

    @Test
    void finiteContributionsCarryNoFlag() {
        final InstanceBatch.Builder b = new InstanceBatch.Builder(2, 8);
        b.addDense(1, 2, new double[] {0.5, -1});
        final LogisticObjective obj = binary();
        final double[] coef = {0.1, 0.2, 0.3};
        final double[] v = obj.contribution(List.of(b.build()), coef);
        assertEquals(0.0, v[obj.dim() + 2]);
        final double[] grad = new double[obj.dim()];
        // one row, label 1, weight 2: loss log(1 + exp(-m)), m = 0.05 - 0.2 + 0.3
        final double m = 0.1 * 0.5 - 0.2 + 0.3;
        assertEquals(Math.log1p(Math.exp(-m)), obj.valueAndGradient(v, coef, grad), 1e-15);
        final double mult = 1 / (1 + Math.exp(-m)) - 1;
        assertEquals(mult * 0.5, grad[0], 1e-15);
        assertEquals(-mult, grad[1], 1e-15);
        assertEquals(mult, grad[2], 1e-15);
    }

    /**
     * The sparse kernels walk column blocks; every sum must keep the bits of the plain row-by-row
     * definition below (rows in order, a row's features ascending), over several blocks, rows of weight 0
     * and empty rows.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 3, 7})
    void columnBlocksGiveTheBitsOfRowByRow(final int classes) {
        final long seed = Seeds.seed("LogisticObjectiveTest.columnBlocks" + classes, 0xC01B10C5L + classes);
        final SplittableRandom rnd = new SplittableRandom(seed);
        final int f = 3_000;
        final boolean multinomial = classes > 2;
        final int sets = multinomial ? classes : 1;
        final List<InstanceBatch> batches = new ArrayList<>();
        final InstanceBatch.Builder builder = new InstanceBatch.Builder(f, 16);
        final int rows = 3 * ColumnBlock.rowsFor(sets) + 123;
        for (int r = 0; r < rows; r++) {
            final int nnz = rnd.nextInt(0, 12);
            final int[] idx =
                    rnd.ints(4L * nnz, 0, f).distinct().limit(nnz).sorted().toArray();
            final double[] val = new double[idx.length];
            for (int i = 0; i < val.length; i++) {
                val[i] = rnd.nextDouble(-2, 2);
            }
            final double weight = rnd.nextInt(10) == 0 ? 0.0 : rnd.nextDouble(0.5, 2);
            builder.add(rnd.nextInt(classes), weight, idx, val, idx.length);
            if (builder.full()) {
                batches.add(builder.build());
            }
        }
        batches.add(builder.build());
        final double[] ones = new double[f];
        Arrays.fill(ones, 1.0);
        // 1/std = 1 and no centering: the contribution is the raw sums (the post-processing multiplies by 1)
        final LogisticObjective obj =
                new LogisticObjective(f, classes, multinomial, true, false, ones, new double[f], 0.0, true, ones);
        final double[] coef = new double[obj.dim()];
        for (int i = 0; i < coef.length; i++) {
            coef[i] = rnd.nextDouble(-0.5, 0.5);
        }
        final double[] expected = rowByRow(batches, coef, f, classes, multinomial);
        final double[] v = obj.contribution(batches, coef);
        assertArrayEquals(expected, v, "the same bits as row by row");
        // the second evaluation reuses the blocks; the bits stay
        final ColumnBlock block = batches.get(0).columnBlock;
        assertArrayEquals(expected, obj.contribution(batches, coef));
        assertSame(block, batches.get(0).columnBlock, "a block is made once for the same run of batches");
        // another grouping of the same batches (a task with a subset) makes its own block
        final List<InstanceBatch> fewer = batches.subList(0, 3);
        assertArrayEquals(rowByRow(fewer, coef, f, classes, multinomial), obj.contribution(fewer, coef));
        assertNotSame(block, batches.get(0).columnBlock);
    }

    /** The row-by-row definition: {gradient sum, intercept sums, loss sum, weight sum, flag 0}. */
    private static double[] rowByRow(
            final List<InstanceBatch> batches,
            final double[] coef,
            final int f,
            final int k,
            final boolean multinomial) {
        final int sets = multinomial ? k : 1;
        final double[] out = new double[sets * (f + 1) + 3];
        final double[] multiplierSums = new double[sets];
        double lossTotal = 0.0;
        double weightTotal = 0.0;
        for (final InstanceBatch b : batches) {
            final double[] multiplierSum = new double[sets];
            double loss = 0.0;
            double weightSum = 0.0;
            for (int r = 0; r < b.rows; r++) {
                final double w = b.weights[r];
                weightSum += w;
                if (!(w > 0)) {
                    continue;
                }
                if (multinomial) {
                    final double[] m = Arrays.copyOfRange(coef, f * k, f * k + k);
                    for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                        for (int c = 0; c < k; c++) {
                            m[c] += b.values[p] * coef[b.indices[p] * k + c];
                        }
                    }
                    LogisticObjective.softmax(m);
                    final int label = (int) b.labels[r];
                    loss += -w * Math.log(m[label]);
                    for (int c = 0; c < k; c++) {
                        m[c] *= w;
                    }
                    m[label] -= w;
                    for (int c = 0; c < k; c++) {
                        multiplierSum[c] += m[c];
                    }
                    for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                        for (int c = 0; c < k; c++) {
                            out[b.indices[p] * k + c] += b.values[p] * m[c];
                        }
                    }
                } else {
                    double margin = coef[f];
                    for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                        margin += b.values[p] * coef[b.indices[p]];
                    }
                    final double label = b.labels[r];
                    final double mult = w * (1.0 / (1.0 + Math.exp(-margin)) - label);
                    loss += label > 0
                            ? w * LogisticObjective.log1pExp(-margin)
                            : w * (LogisticObjective.log1pExp(-margin) + margin);
                    multiplierSum[0] += mult;
                    for (int p = b.rowStart[r]; p < b.rowStart[r + 1]; p++) {
                        out[b.indices[p]] += mult * b.values[p];
                    }
                }
            }
            for (int c = 0; c < sets; c++) {
                multiplierSums[c] += multiplierSum[c];
            }
            lossTotal += loss;
            weightTotal += weightSum;
        }
        for (int c = 0; c < sets; c++) {
            out[f * sets + c] += multiplierSums[c];
        }
        out[sets * (f + 1)] = lossTotal;
        out[sets * (f + 1) + 1] = weightTotal;
        return out;
    }
}

package org.switchml.spark.ml.classification;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parts of the objective the MLlib oracle does not reach. */
class LogisticObjectiveTest {

    private static LogisticObjective binary() {
        return new LogisticObjective(2, 2, false, true, false, new double[] {1, 1}, new double[] {0, 0}, 0.0, true,
                new double[] {1, 1});
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
}

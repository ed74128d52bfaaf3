package org.switchml.spark.ml.classification;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;

/**
 * Seeded synthetic classification data: features with different means and scales (so standardization
 * and virtual centering matter), labels drawn from a softmax/logistic model, optional weights and
 * sparsity.
 */
final class LrData {
    private LrData() {}

    /** One generated data set. */
    record Set(List<Instance> rows, int numFeatures, int numClasses) {}

    /**
     * @param classes  2 for binomial labels, more for multinomial
     * @param weighted random weights in [0.25, 2.25) (with a few zeros) instead of 1
     * @param density  fraction of non-zero features per row (1: dense vectors)
     */
    static Set generate(
            final long seed,
            final int rows,
            final int features,
            final int classes,
            final boolean weighted,
            final double density) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] mean = new double[features];
        final double[] scale = new double[features];
        for (int j = 0; j < features; j++) {
            mean[j] = (rnd.nextDouble() - 0.3) * 4;
            scale[j] = Math.pow(10, rnd.nextDouble() * 2 - 1);
        }
        final double[][] w = new double[classes][features];
        final double[] b = new double[classes];
        for (int c = 0; c < classes; c++) {
            for (int j = 0; j < features; j++) {
                w[c][j] = rnd.nextGaussian() / scale[j];
            }
            b[c] = rnd.nextGaussian() * 0.5;
        }
        final List<Instance> out = new ArrayList<>(rows);
        final double[] p = new double[classes];
        for (int i = 0; i < rows; i++) {
            final double[] x = new double[features];
            for (int j = 0; j < features; j++) {
                if (density >= 1 || rnd.nextDouble() < density) {
                    x[j] = mean[j] + scale[j] * rnd.nextGaussian();
                }
            }
            double max = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++) {
                double m = b[c];
                for (int j = 0; j < features; j++) {
                    m += w[c][j] * (x[j] - (density >= 1 ? mean[j] : 0));
                }
                p[c] = m;
                max = Math.max(max, m);
            }
            double sum = 0;
            for (int c = 0; c < classes; c++) {
                p[c] = Math.exp(p[c] - max);
                sum += p[c];
            }
            double u = rnd.nextDouble() * sum;
            int label = classes - 1;
            for (int c = 0; c < classes; c++) {
                u -= p[c];
                if (u < 0) {
                    label = c;
                    break;
                }
            }
            final double weight = !weighted ? 1.0 : (rnd.nextDouble() < 0.02 ? 0.0 : 0.25 + 2 * rnd.nextDouble());
            final Vector v = density >= 1 ? Vectors.dense(x) : Vectors.dense(x).compressed();
            out.add(new Instance(label, weight, v));
        }
        return new Set(out, features, classes);
    }

    /** Splits rows round-robin into {@code parts} partitions. */
    static List<List<Instance>> split(final List<Instance> rows, final int parts) {
        final List<List<Instance>> out = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            out.add(new ArrayList<>());
        }
        for (int i = 0; i < rows.size(); i++) {
            out.get(i % parts).add(rows.get(i));
        }
        return out;
    }
}

package org.switchml.it;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.LabeledPoint;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;

/**
 * A Spark application that trains the drop-in {@link SwitchMLLogisticRegression} with a checkpoint interval, fit
 * after fit, and prints one line per iteration ({@code FIT-APP fit F iteration I/N loss L}) and one per fit
 * ({@code FIT-APP fit F done after I iterations}): the application a test kills in the middle of a fit.
 *
 * <p>Arguments: {@code ROWS FEATURES MAX_ITER FITS SEED}; {@code FITS} 0 fits until the process is killed.
 */
public final class FitApp {
    private FitApp() {}

    public static void main(final String[] args) {
        final int rows = Integer.parseInt(args[0]);
        final int features = Integer.parseInt(args[1]);
        final int maxIter = Integer.parseInt(args[2]);
        final int fits = Integer.parseInt(args[3]);
        final long seed = Long.parseLong(args[4]);
        System.out.println("FIT-APP seed " + seed);
        final SparkSession spark = SparkSession.builder().getOrCreate();
        try {
            final Dataset<Row> data = spark.createDataFrame(points(rows, features, seed), LabeledPoint.class)
                    .repartition(4)
                    .cache();
            for (int f = 1; fits == 0 || f <= fits; f++) {
                final int fit = f;
                final SwitchMLLogisticRegression lr = (SwitchMLLogisticRegression) new SwitchMLLogisticRegression()
                        .setCheckpointInterval(2)
                        .setMaxIter(maxIter)
                        .setTol(0.0)
                        .setRegParam(1e-4);
                lr.setListener(r -> {
                    System.out.println("FIT-APP fit " + fit + " iteration " + r.iteration() + "/" + r.maxIter()
                            + " loss " + r.loss());
                    System.out.flush();
                });
                final LogisticRegressionModel model = lr.fit(data);
                System.out.println(
                        "FIT-APP fit " + fit + " done after " + model.summary().totalIterations() + " iterations");
            }
        } finally {
            spark.stop();
        }
    }

    /** Rows with a seeded linear decision boundary and label noise, so that the fit never converges early. */
    private static List<LabeledPoint> points(final int rows, final int features, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        final double[] w = new double[features];
        for (int j = 0; j < features; j++) {
            w[j] = rnd.nextGaussian();
        }
        final List<LabeledPoint> out = new ArrayList<>(rows);
        for (int i = 0; i < rows; i++) {
            final double[] x = new double[features];
            double margin = 0;
            for (int j = 0; j < features; j++) {
                x[j] = rnd.nextGaussian();
                margin += w[j] * x[j];
            }
            final double label = rnd.nextDouble() < 1 / (1 + Math.exp(-margin)) ? 1.0 : 0.0;
            out.add(new LabeledPoint(label, Vectors.dense(x)));
        }
        return out;
    }
}

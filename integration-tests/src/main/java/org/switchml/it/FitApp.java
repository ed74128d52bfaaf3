package org.switchml.it;

import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.LabeledPoint;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A Spark application that trains the drop-in {@link SwitchMLLogisticRegression} with a checkpoint interval and
 * prints one line per iteration ({@code FIT-APP iteration I/N loss L}), then {@code FIT-APP DONE}: the
 * application a test kills in the middle of its fit.
 *
 * <p>Arguments: {@code ROWS FEATURES MAX_ITER SEED}.
 */
public final class FitApp {
    private FitApp() {
    }

    public static void main(final String[] args) {
        final int rows = Integer.parseInt(args[0]);
        final int features = Integer.parseInt(args[1]);
        final int maxIter = Integer.parseInt(args[2]);
        final long seed = Long.parseLong(args[3]);
        System.out.println("FIT-APP seed " + seed);
        final SparkSession spark = SparkSession.builder().getOrCreate();
        try {
            final Dataset<Row> data = spark.createDataFrame(points(rows, features, seed), LabeledPoint.class)
                    .repartition(4).cache();
            final SwitchMLLogisticRegression lr = (SwitchMLLogisticRegression) new SwitchMLLogisticRegression()
                    .setCheckpointInterval(2).setMaxIter(maxIter).setTol(0.0).setRegParam(1e-4);
            lr.setListener(r -> {
                System.out.println("FIT-APP iteration " + r.iteration() + "/" + r.maxIter() + " loss " + r.loss());
                System.out.flush();
            });
            final LogisticRegressionModel model = lr.fit(data);
            System.out.println("FIT-APP DONE iterations " + model.summary().totalIterations());
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

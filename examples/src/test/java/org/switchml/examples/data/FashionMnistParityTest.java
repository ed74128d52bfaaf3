package org.switchml.examples.data;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.switchml.spark.ml.classification.MllibParity;
import org.switchml.testing.Seeds;

/**
 * SwitchMLLogisticRegression against stock MLlib LogisticRegression ({@link MllibParity}'s criteria) on a
 * 5,000-row seeded sample of Fashion-MNIST's training set: 10 classes, 784 pixels, 7,850 coefficients.
 * Capped at 15 iterations, as each stock MLlib evaluation is a Spark job.
 */
class FashionMnistParityTest {

    @Test
    void fashionMnistSample() throws IOException {
        final Path dir = FashionMnist.defaultDirectory();
        assumeTrue(
                FashionMnist.available(dir, FashionMnist.Split.TRAIN), "dataset-fashion-mnist not installed in " + dir);
        final long seed = Seeds.seed("FashionMnistParityTest.fashionMnist", 24);
        final FashionMnist train = FashionMnist.load(dir, FashionMnist.Split.TRAIN);
        final List<Instance> rows = new ArrayList<>();
        for (final int i : train.sample(5000, seed)) {
            rows.add(new Instance(
                    train.label(i), 1.0, Vectors.dense(train.pixels(i)).compressed()));
        }
        final SparkSession spark = MllibParity.localSession("FashionMnistParityTest");
        try {
            final Dataset<Row> d = MllibParity.frame(spark, rows, 4);
            MllibParity.compare("fashion-mnist-5k", d, lr -> lr.setMaxIter(15).setRegParam(1e-3));
        } finally {
            spark.stop();
        }
    }
}

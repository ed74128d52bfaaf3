package org.switchml.spark.ml.classification;

import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.Matrices;
import org.apache.spark.ml.linalg.Matrix;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.spark.ml.data.FashionMnist;
import org.switchml.testing.Seeds;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * SwitchMLLogisticRegression against stock MLlib LogisticRegression on the same data and params,
 * local[4], the sums through the embedded switch in fp64. Criteria of issue 8: final objective within
 * 1e-6 relative of MLlib's or lower; coefficients (with intercepts) within 1e-3 relative in L2 norm;
 * predictions agree on at least 99.9% of the rows; iteration counts within 10% (at least 1).
 *
 * <p>Each stock MLlib evaluation is a Spark job (about 0.3 s here), so the longer fits are capped at 15
 * iterations: both sides then stop at the same iteration, and the comparison is of the same trajectory
 * point. The step-by-step identity of the algorithms is covered without the switch by
 * OptimizerOracleTest and BreezeParityTest. Not covered here: bounds on the intercepts, which turn off
 * MLlib's virtual centering; on this data breeze's L-BFGS-B then runs to maxIter without converging,
 * and the two runs drift apart chaotically (measured at 100 iterations: our objective 9e-5 lower,
 * coefficients 1.5e-2 apart), while OptimizerOracleTest shows them identical for the first iterations.
 */
class SwitchMLLogisticRegressionParityTest {
    private static SparkSession spark;

    private static final StructType SCHEMA = new StructType(new StructField[] {
        new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("weight", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())});

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[4]").appName("SwitchMLLogisticRegressionParityTest")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.switchml.resultTimeout", "20s")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    private static Dataset<Row> frame(final List<Instance> rows, final int partitions) {
        final List<Row> out = new ArrayList<>(rows.size());
        for (final Instance in : rows) {
            out.add(RowFactory.create(in.label(), in.weight(), in.features()));
        }
        return spark.createDataFrame(out, SCHEMA).repartition(partitions).cache();
    }

    /** What one comparison measured. */
    record Outcome(double objectiveRel, double coefficientRel, int ours, int mllib, double agreement) {
    }

    private static double[] flatten(final LogisticRegressionModel m) {
        final double[] c = m.coefficientMatrix().toArray();
        final double[] b = m.interceptVector().toArray();
        final double[] out = Arrays.copyOf(c, c.length + b.length);
        System.arraycopy(b, 0, out, c.length, b.length);
        return out;
    }

    /** Fits both estimators configured by {@code params} on {@code data}, checks the criteria. */
    private static Outcome compare(final String name, final Dataset<Row> data, final Consumer<LogisticRegression> params) {
        final LogisticRegression stock = new LogisticRegression();
        final SwitchMLLogisticRegression ours = new SwitchMLLogisticRegression();
        params.accept(stock);
        params.accept(ours);
        long t = System.nanoTime();
        final LogisticRegressionModel expected = stock.fit(data);
        final long stockMs = (System.nanoTime() - t) / 1_000_000;
        t = System.nanoTime();
        final LogisticRegressionModel actual = ours.fit(data);
        final long oursMs = (System.nanoTime() - t) / 1_000_000;
        System.out.println("[parity] " + name + ": " + ours.lastFit());

        assertSame(LogisticRegressionModel.class, actual.getClass());
        assertSame(ours, actual.parent());
        final double[] he = expected.summary().objectiveHistory();
        final double[] ha = actual.summary().objectiveHistory();
        assertEquals(ha.length - 1, actual.summary().totalIterations());
        final double fe = he[he.length - 1];
        final double fa = ha[ha.length - 1];
        final double objectiveRel = (fa - fe) / Math.abs(fe);
        final double coefRel = OptimizerOracleTest.relDiff(flatten(expected), flatten(actual));
        final List<Row> pe = expected.transform(data).select("prediction").collectAsList();
        final List<Row> pa = actual.transform(data).select("prediction").collectAsList();
        int same = 0;
        for (int i = 0; i < pe.size(); i++) {
            if (pe.get(i).getDouble(0) == pa.get(i).getDouble(0)) {
                same++;
            }
        }
        final double agreement = (double) same / pe.size();
        final int ie = expected.summary().totalIterations();
        final int ia = actual.summary().totalIterations();
        System.out.printf("[parity] %s: objective %.12g vs MLlib %.12g (rel %+.2e); coefficients rel diff %.2e; "
                        + "iterations %d vs %d; predictions agree %.4f; fit %d ms vs MLlib %d ms%n", name, fa, fe,
                objectiveRel, coefRel, ia, ie, agreement, oursMs, stockMs);
        assertTrue(objectiveRel <= 1e-6, name + ": objective " + fa + " vs MLlib " + fe);
        assertTrue(coefRel <= 1e-3, name + ": coefficients differ by " + coefRel);
        assertTrue(agreement >= 0.999, name + ": predictions agree on " + agreement);
        assertTrue(Math.abs(ia - ie) <= Math.max(1, 0.1 * ie), name + ": iterations " + ia + " vs " + ie);
        return new Outcome(objectiveRel, coefRel, ia, ie, agreement);
    }

    private static Dataset<Row> generated(final String name, final long defaultSeed, final int classes,
                                          final boolean weighted, final double density) {
        final long seed = Seeds.seed("SwitchMLLogisticRegressionParityTest." + name, defaultSeed);
        return frame(LrData.generate(seed, 2000, 10, classes, weighted, density).rows(), 6);
    }

    @Test
    void binomial() {
        final Dataset<Row> d = generated("binomial", 21, 2, true, 1.0);
        compare("binomial-intercept-weighted", d, lr -> lr.setWeightCol("weight"));
        compare("binomial-nointercept-l2-nostd", d, lr -> lr.setFitIntercept(false).setRegParam(0.05).setStandardization(false)
                .setMaxIter(15));
        compare("binomial-elasticnet", d, lr -> lr.setRegParam(0.02).setElasticNetParam(0.5).setWeightCol("weight"));
        compare("binomial-bounds", d, lr -> lr.setRegParam(0.01).setMaxIter(15)
                .setLowerBoundsOnCoefficients(Matrices.dense(1, 10, new double[10]))
                .setUpperBoundsOnIntercepts(Vectors.dense(0.5)));
    }

    @Test
    void multinomial() {
        final Dataset<Row> d = generated("multinomial", 22, 4, false, 1.0);
        compare("multinomial-intercept", d, lr -> { });
        compare("multinomial-l2-nointercept", d, lr -> lr.setRegParam(0.01).setFitIntercept(false).setMaxIter(15));
        compare("multinomial-elasticnet-nostd", d, lr -> lr.setRegParam(0.01).setElasticNetParam(0.3)
                .setStandardization(false).setMaxIter(15));
        // Coefficient bounds only: with bounds on the intercepts MLlib cannot center virtually, and on this
        // data breeze's L-BFGS-B then crawls to maxIter without converging (see the class comment).
        compare("multinomial-bounds", d, lr -> lr.setRegParam(0.01).setLowerBoundsOnCoefficients(Matrices.dense(4, 10, new double[40])));
    }

    @Test
    void sparseBinomial() {
        final Dataset<Row> d = generated("sparse", 23, 2, true, 0.2);
        compare("binomial-sparse-l2", d, lr -> lr.setRegParam(0.01).setWeightCol("weight"));
    }

    /** A 5,000-row seeded sample of Fashion-MNIST's training set (10 classes, 784 pixels, 7,850 coefficients). */
    @Test
    void fashionMnistSample() throws IOException {
        final Path dir = FashionMnist.defaultDirectory();
        assumeTrue(FashionMnist.available(dir, FashionMnist.Split.TRAIN), "dataset-fashion-mnist not installed in " + dir);
        final long seed = Seeds.seed("SwitchMLLogisticRegressionParityTest.fashionMnist", 24);
        final FashionMnist train = FashionMnist.load(dir, FashionMnist.Split.TRAIN);
        final List<Instance> rows = new ArrayList<>();
        for (final int i : train.sample(5000, seed)) {
            rows.add(new Instance(train.label(i), 1.0, Vectors.dense(train.pixels(i)).compressed()));
        }
        final Dataset<Row> d = frame(rows, 4);
        compare("fashion-mnist-5k", d, lr -> lr.setMaxIter(15).setRegParam(1e-3));
    }
}

package org.switchml.spark.ml.classification;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * SwitchMLLogisticRegression against stock MLlib LogisticRegression on the same data and params, the sums
 * through the embedded switch in fp64. Criteria: final objective within 1e-6 relative of MLlib's or lower;
 * coefficients (with intercepts) within 1e-3 relative in L2 norm; predictions agree on at least 99.9% of
 * the rows; iteration counts within 10% (at least 1). Public for the tests of the examples module, which
 * compare on Fashion-MNIST.
 */
public final class MllibParity {
    private static final StructType SCHEMA = new StructType(new StructField[] {
        new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("weight", DataTypes.DoubleType, false, Metadata.empty()),
        new StructField("features", SQLDataTypes.VectorType(), false, Metadata.empty())
    });

    private MllibParity() {}

    /** A local[4] session on the loopback interface, for the comparisons. */
    public static SparkSession localSession(final String appName) {
        return localSession(appName, true);
    }

    /**
     * As {@link #localSession(String)}; {@code localShortcut} false sends the sums through the switch,
     * though the one executor of a local master could take them in memory.
     */
    public static SparkSession localSession(final String appName, final boolean localShortcut) {
        final SparkSession spark = SparkSession.builder()
                .master("local[4]")
                .appName(appName)
                .config("spark.switchml.localShortcut", Boolean.toString(localShortcut))
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.switchml.resultTimeout", "20s")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        return spark;
    }

    /** {@code rows} as a cached frame of label, weight and features in {@code partitions} partitions. */
    public static Dataset<Row> frame(final SparkSession spark, final List<Instance> rows, final int partitions) {
        final List<Row> out = new ArrayList<>(rows.size());
        for (final Instance in : rows) {
            out.add(RowFactory.create(in.label(), in.weight(), in.features()));
        }
        return spark.createDataFrame(out, SCHEMA).repartition(partitions).cache();
    }

    /** The model's coefficients followed by its intercepts, in one array. */
    public static double[] flatten(final LogisticRegressionModel m) {
        final double[] c = m.coefficientMatrix().toArray();
        final double[] b = m.interceptVector().toArray();
        final double[] out = Arrays.copyOf(c, c.length + b.length);
        System.arraycopy(b, 0, out, c.length, b.length);
        return out;
    }

    /** Fits both estimators configured by {@code params} on {@code data}, checks the criteria. */
    public static void compare(final String name, final Dataset<Row> data, final Consumer<LogisticRegression> params) {
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
        System.out.printf(
                "[parity] %s: objective %.12g vs MLlib %.12g (rel %+.2e); coefficients rel diff %.2e; "
                        + "iterations %d vs %d; predictions agree %.4f; fit %d ms vs MLlib %d ms%n",
                name, fa, fe, objectiveRel, coefRel, ia, ie, agreement, oursMs, stockMs);
        assertTrue(objectiveRel <= 1e-6, name + ": objective " + fa + " vs MLlib " + fe);
        assertTrue(coefRel <= 1e-3, name + ": coefficients differ by " + coefRel);
        assertTrue(agreement >= 0.999, name + ": predictions agree on " + agreement);
        assertTrue(Math.abs(ia - ie) <= Math.max(1, 0.1 * ie), name + ": iterations " + ia + " vs " + ie);
    }
}

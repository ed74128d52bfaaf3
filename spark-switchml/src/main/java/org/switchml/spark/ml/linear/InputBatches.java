package org.switchml.spark.ml.linear;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.util.DatasetUtils$;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;
import scala.Option;

/** A fit's input: the rows, checked as MLlib checks them, in cached {@link InstanceBatch}es. */
final class InputBatches {
    private InputBatches() {}

    /**
     * The label, weight and features of every row, checked as MLlib checks them (the weights non-negative,
     * the vectors without NaN, the labels by {@code label}, e.g. MLlib's classification check).
     */
    static JavaRDD<Instance> instances(
            final Dataset<?> dataset, final Column label, final Option<String> weightCol, final String featuresCol) {
        final Dataset<Row> selected = dataset.select(
                label,
                DatasetUtils$.MODULE$.checkNonNegativeWeights(weightCol),
                DatasetUtils$.MODULE$.checkNonNanVectors(featuresCol));
        return selected.toJavaRDD().map(r -> new Instance(r.getDouble(0), r.getDouble(1), (Vector) r.get(2)));
    }

    /**
     * The rows in batches of about 1 MiB of dense features, several per partition, unscaled, cached in
     * memory and on disk; every row of a partition must have the first row's size.
     */
    static JavaRDD<InstanceBatch> cached(final JavaRDD<Instance> instances) {
        return instances
                .mapPartitions(it -> {
                    final List<InstanceBatch> out = new ArrayList<>();
                    InstanceBatch.Builder b = null;
                    int numFeatures = -1;
                    while (it.hasNext()) {
                        final Instance in = it.next();
                        final Vector v = in.features();
                        if (b == null) {
                            numFeatures = v.size();
                            final int rows =
                                    (int) Math.max(16, Math.min(4096, (1L << 20) / (8L * Math.max(1, numFeatures))));
                            b = new InstanceBatch.Builder(numFeatures, rows);
                        } else if (v.size() != numFeatures) {
                            throw new IllegalArgumentException("Dimensions mismatch when adding new sample. Expecting "
                                    + numFeatures + " but got " + v.size() + ".");
                        }
                        if (v instanceof SparseVector sv) {
                            b.add(in.label(), in.weight(), sv.indices(), sv.values(), sv.indices().length);
                        } else {
                            b.addDense(in.label(), in.weight(), v.toArray());
                        }
                        if (b.full()) {
                            out.add(b.build());
                        }
                    }
                    if (b != null && b.rows() > 0) {
                        out.add(b.build());
                    }
                    return out.iterator();
                })
                .persist(StorageLevel.MEMORY_AND_DISK());
    }

    /**
     * Reads the input into the cache with one ordinary job and returns the number of features: bad input
     * fails here exactly as in MLlib (a failure inside the barrier stages would be retried as a stage and
     * lose its message).
     */
    static int numFeatures(final JavaRDD<InstanceBatch> batches) {
        final long[] shape = batches.aggregate(
                new long[] {Long.MAX_VALUE, Long.MIN_VALUE, 0},
                (acc, b) -> new long[] {
                    Math.min(acc[0], b.numFeatures()), Math.max(acc[1], b.numFeatures()), acc[2] + b.size()
                },
                (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1]), a[2] + b[2]});
        if (shape[2] == 0) {
            throw new IllegalArgumentException("requirement failed: Nothing has been added to this summarizer.");
        }
        if (shape[0] != shape[1]) {
            throw new IllegalArgumentException(
                    "Dimensions mismatch when adding new sample. Expecting " + shape[0] + " but got " + shape[1] + ".");
        }
        return (int) shape[0];
    }
}

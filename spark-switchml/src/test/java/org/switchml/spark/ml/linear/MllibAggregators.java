package org.switchml.spark.ml.linear;

import java.util.List;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.feature.InstanceBlock;
import org.apache.spark.ml.feature.InstanceBlock$;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.optim.aggregator.BinaryLogisticBlockAggregator;
import org.apache.spark.ml.optim.aggregator.DifferentiableLossAggregator;
import org.apache.spark.ml.optim.aggregator.HingeBlockAggregator;
import org.apache.spark.ml.optim.aggregator.LeastSquaresBlockAggregator;
import org.apache.spark.ml.optim.aggregator.MultinomialLogisticBlockAggregator;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * MLlib 4.0.1's own block aggregators, driven from Java without a Spark session: Scala's {@code private[ml]}
 * is public in bytecode, and their broadcasts are {@link Local} values. The oracle for the kernels: logistic and
 * softmax (LogisticRegression), hinge (LinearSVC) and squared error (LinearRegression).
 */
final class MllibAggregators {
    private MllibAggregators() {}

    /** What an aggregator summed over its blocks: gradient (training space), loss and weight. */
    record Sums(double[] gradient, double loss, double weight) {}

    /** A broadcast that is just its value: what the aggregators read, with no Spark session behind it. */
    static final class Local<T> extends Broadcast<T> {
        private static final long serialVersionUID = 1L;
        private final T value;

        Local(final T value, final Class<T> type) {
            super(0L, ClassTag$.MODULE$.apply(type));
            this.value = value;
        }

        @Override
        public T getValue() {
            return value;
        }

        @Override
        public void doUnpersist(final boolean blocking) {}

        @Override
        public void doDestroy(final boolean blocking) {}
    }

    /**
     * The sums of MLlib's Binary- or MultinomialLogisticBlockAggregator over {@code blocks} of rows whose
     * features are already scaled by {@code inverseStd} (as MLlib scales them), at {@code coefficients} (its
     * layout, which is ours).
     */
    static Sums logistic(
            final boolean multinomial,
            final double[] inverseStd,
            final double[] scaledMean,
            final boolean fitIntercept,
            final boolean fitWithMean,
            final double[] coefficients,
            final List<List<Instance>> blocks) {
        final Local<double[]> inv = new Local<>(inverseStd, double[].class);
        final Local<double[]> mean = new Local<>(scaledMean, double[].class);
        final Local<Vector> coef = new Local<>(Vectors.dense(coefficients.clone()), Vector.class);
        final DifferentiableLossAggregator<InstanceBlock, ?> agg = multinomial
                ? new MultinomialLogisticBlockAggregator(inv, mean, fitIntercept, fitWithMean, coef)
                : new BinaryLogisticBlockAggregator(inv, mean, fitIntercept, fitWithMean, coef);
        for (final List<Instance> rows : blocks) {
            agg.add(InstanceBlock$.MODULE$.fromInstances(
                    CollectionConverters.asScala(rows).toSeq()));
        }
        return new Sums(agg.gradientSumArray().clone(), agg.lossSum(), agg.weightSum());
    }

    /**
     * The sums of MLlib's HingeBlockAggregator (LinearSVC: virtually centered with an intercept) over {@code blocks}
     * of rows scaled by {@code inverseStd}, at {@code coefficients}.
     */
    static Sums hinge(
            final double[] inverseStd,
            final double[] scaledMean,
            final boolean fitIntercept,
            final double[] coefficients,
            final List<List<Instance>> blocks) {
        return sums(
                new HingeBlockAggregator(
                        new Local<>(inverseStd, double[].class),
                        new Local<>(scaledMean, double[].class),
                        fitIntercept,
                        new Local<>(Vectors.dense(coefficients.clone()), Vector.class)),
                blocks);
    }

    /**
     * The sums of MLlib's LeastSquaresBlockAggregator (LinearRegression's squared error, no intercept coefficient)
     * over {@code blocks} of rows scaled by {@code inverseStd}, at {@code coefficients}.
     */
    static Sums leastSquares(
            final double[] inverseStd,
            final double[] scaledMean,
            final boolean fitIntercept,
            final double labelStd,
            final double labelMean,
            final double[] coefficients,
            final List<List<Instance>> blocks) {
        return sums(
                new LeastSquaresBlockAggregator(
                        new Local<>(inverseStd, double[].class),
                        new Local<>(scaledMean, double[].class),
                        fitIntercept,
                        labelStd,
                        labelMean,
                        new Local<>(Vectors.dense(coefficients.clone()), Vector.class)),
                blocks);
    }

    private static Sums sums(
            final DifferentiableLossAggregator<InstanceBlock, ?> agg, final List<List<Instance>> blocks) {
        for (final List<Instance> rows : blocks) {
            agg.add(InstanceBlock$.MODULE$.fromInstances(
                    CollectionConverters.asScala(rows).toSeq()));
        }
        return new Sums(agg.gradientSumArray().clone(), agg.lossSum(), agg.weightSum());
    }
}

package org.switchml.spark.ml.classification;

import breeze.linalg.DenseVector;
import breeze.linalg.DenseVector$;
import breeze.optimize.CachedDiffFunction;
import breeze.optimize.FirstOrderMinimizer;
import breeze.optimize.LBFGS;
import breeze.optimize.LBFGSB;
import breeze.optimize.OWLQN;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.feature.Instance;
import org.apache.spark.ml.feature.InstanceBlock;
import org.apache.spark.ml.feature.InstanceBlock$;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.optim.aggregator.BinaryLogisticBlockAggregator;
import org.apache.spark.ml.optim.aggregator.MultinomialLogisticBlockAggregator;
import org.apache.spark.ml.optim.loss.L2Regularization;
import org.apache.spark.ml.optim.loss.RDDLossFunction;
import org.apache.spark.rdd.RDD;
import scala.Function1;
import scala.Option;
import scala.Tuple2;
import scala.collection.Iterator;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * MLlib 4.0.1's own training path, driven from Java as a test oracle: the block aggregators and
 * RDDLossFunction (loss and gradient through treeAggregate) and breeze's LBFGS / OWLQN / LBFGSB
 * iterating on them, as LogisticRegression.trainImpl does.
 */
final class MllibOracle {
    private MllibOracle() {}

    /** One emitted breeze state. */
    record State(double[] x, double adjustedValue, int iter) {}

    /** The problem as MLlib sets it up (training space). */
    record Problem(
            int numFeatures,
            int numClasses,
            boolean multinomial,
            boolean fitIntercept,
            boolean fitWithMean,
            double[] inverseStd,
            double[] scaledMean,
            double[] featuresStd,
            double regL2,
            boolean standardization) {
        int sets() {
            return multinomial ? numClasses : 1;
        }
    }

    private static final ClassTag<InstanceBlock> BLOCK = ClassTag$.MODULE$.apply(InstanceBlock.class);

    /** MLlib's loss function over {@code scaled} instances (features already multiplied by 1/std). */
    static RDDLossFunction<InstanceBlock, ?> lossFunction(
            final JavaSparkContext jsc, final List<Instance> scaled, final int parts, final Problem p) {
        final RDD<Instance> rdd = jsc.parallelize(scaled, parts).rdd();
        final RDD<InstanceBlock> blocks = InstanceBlock$.MODULE$
                .blokifyWithMaxMemUsage(rdd, 1024L * 1024L)
                .cache();
        final Broadcast<double[]> inv = jsc.sc().broadcast(p.inverseStd(), ClassTag$.MODULE$.apply(double[].class));
        final Broadcast<double[]> mean = jsc.sc().broadcast(p.scaledMean(), ClassTag$.MODULE$.apply(double[].class));
        final Option<L2Regularization> reg;
        if (p.regL2() != 0.0) {
            final int sets = p.sets();
            final int f = p.numFeatures();
            final Function1<Object, Object> apply = idx -> (Integer) idx >= 0 && (Integer) idx < f * sets;
            final Option<Function1<Object, Object>> std = p.standardization()
                    ? Option.empty()
                    : Option.apply(j ->
                            (Integer) j >= 0 && (Integer) j < sets * f ? p.featuresStd()[(Integer) j / sets] : 0.0);
            reg = Option.apply(new L2Regularization(p.regL2(), apply, std));
        } else {
            reg = Option.empty();
        }
        if (p.multinomial()) {
            final Function1<Broadcast<Vector>, MultinomialLogisticBlockAggregator> agg =
                    bc -> new MultinomialLogisticBlockAggregator(inv, mean, p.fitIntercept(), p.fitWithMean(), bc);
            return new RDDLossFunction<>(
                    blocks,
                    agg,
                    toOption(reg),
                    2,
                    BLOCK,
                    ClassTag$.MODULE$.apply(MultinomialLogisticBlockAggregator.class));
        }
        final Function1<Broadcast<Vector>, BinaryLogisticBlockAggregator> agg =
                bc -> new BinaryLogisticBlockAggregator(inv, mean, p.fitIntercept(), p.fitWithMean(), bc);
        return new RDDLossFunction<>(
                blocks, agg, toOption(reg), 2, BLOCK, ClassTag$.MODULE$.apply(BinaryLogisticBlockAggregator.class));
    }

    @SuppressWarnings("unchecked")
    private static <R> Option<R> toOption(final Option<L2Regularization> reg) {
        return (Option<R>) (Option<?>) reg;
    }

    /** MLlib's loss and gradient at {@code x}. */
    static double calculate(final RDDLossFunction<InstanceBlock, ?> f, final double[] x, final double[] gradOut) {
        final Tuple2<Object, DenseVector<Object>> r = f.calculate(dv(x));
        final double[] g = r._2().toArray$mcD$sp(ClassTag$.MODULE$.Double());
        System.arraycopy(g, 0, gradOut, 0, g.length);
        return (Double) r._1();
    }

    static DenseVector<Object> dv(final double[] x) {
        return DenseVector$.MODULE$.apply$mDc$sp(x.clone());
    }

    /** Runs breeze as MLlib's createOptimizer would, returning every emitted state. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static List<State> run(
            final RDDLossFunction<InstanceBlock, ?> f,
            final double[] x0,
            final int maxIter,
            final double tol,
            final double[] l1,
            final double[] lower,
            final double[] upper) {
        final FirstOrderMinimizer opt;
        if (lower != null) {
            opt = new LBFGSB(dv(lower), dv(upper), maxIter, 10, tol, 64, 64);
        } else if (l1 != null) {
            final Function1<Object, Object> fn = i -> l1[(Integer) i];
            opt = new OWLQN<Object, DenseVector<Object>>(maxIter, 10, fn, tol, DenseVector$.MODULE$.space_Double());
        } else {
            opt = new LBFGS<DenseVector<Object>>(maxIter, 10, tol, DenseVector$.MODULE$.space_Double());
        }
        final CachedDiffFunction<DenseVector<Object>> cached =
                new CachedDiffFunction<>(f, DenseVector$.MODULE$.canCopyDenseVector(ClassTag$.MODULE$.Double()));
        final Iterator<FirstOrderMinimizer.State> it = opt.iterations(cached, dv(x0));
        final List<State> out = new ArrayList<>();
        while (it.hasNext()) {
            final FirstOrderMinimizer.State s = it.next();
            final double[] x = ((DenseVector<Object>) s.x()).toArray$mcD$sp(ClassTag$.MODULE$.Double());
            out.add(new State(x, s.adjustedValue(), s.iter()));
        }
        return out;
    }

    /** Vectors.dense over a scaled copy. */
    static Instance scale(final Instance in, final double[] inverseStd) {
        final double[] x = in.features().toArray().clone(); // toArray of a dense vector is its own array
        for (int j = 0; j < x.length; j++) {
            x[j] *= inverseStd[j];
        }
        final Vector v =
                in.features() instanceof SparseVector ? Vectors.dense(x).toSparse() : Vectors.dense(x);
        return new Instance(in.label(), in.weight(), v);
    }
}

package org.switchml.spark.ml.linear;

import java.util.List;
import org.switchml.spark.SwitchMLKryoRegistrator;

/**
 * The estimator's classes that Spark may serialize with Kryo: its cached input blocks (spilled to disk with
 * MEMORY_AND_DISK), and the feature statistics it broadcasts for the fit.
 */
public final class EstimatorKryoClasses implements SwitchMLKryoRegistrator.KryoClasses {
    @Override
    public List<Class<?>> classes() {
        return List.of(InstanceBatch.class, MeanStd.class);
    }
}

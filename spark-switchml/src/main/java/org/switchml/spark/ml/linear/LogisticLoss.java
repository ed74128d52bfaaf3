package org.switchml.spark.ml.linear;

/** The binary logistic loss, as MLlib's BinaryLogisticBlockAggregator computes it per row. */
final class LogisticLoss implements MarginLoss {
    private static final long serialVersionUID = 1L;

    @Override
    public double loss(final double weight, final double label, final double margin) {
        return label > 0 ? weight * log1pExp(-margin) : weight * (log1pExp(-margin) + margin);
    }

    @Override
    public double multiplier(final double weight, final double label, final double margin) {
        return weight * (1.0 / (1.0 + Math.exp(-margin)) - label);
    }

    /** log(1 + exp(x)) without overflow. */
    static double log1pExp(final double x) {
        return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
    }
}

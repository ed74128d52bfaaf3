package org.switchml.spark.ml.linear;

/**
 * The hinge loss of a linear SVM, as MLlib's HingeBlockAggregator computes it per row: with the label {@code y} in
 * {0, 1} mapped to {@code s = 2y - 1}, the loss {@code max(0, 1 - s * margin)} and the multiplier {@code -s} where
 * the loss is positive, 0 elsewhere (the subgradient MLlib takes at the hinge), both times the row's weight.
 */
final class HingeLoss implements MarginLoss {
    private static final long serialVersionUID = 1L;

    @Override
    public double loss(final double weight, final double label, final double margin) {
        final double loss = (1.0 - (label + label - 1.0) * margin) * weight;
        return loss > 0 ? loss : 0.0;
    }

    @Override
    public double multiplier(final double weight, final double label, final double margin) {
        final double signed = label + label - 1.0;
        return (1.0 - signed * margin) * weight > 0 ? -signed * weight : 0.0;
    }
}

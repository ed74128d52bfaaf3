package org.switchml.spark.ml.linear;

/**
 * The squared error of a linear regression in MLlib's training space, as its LeastSquaresBlockAggregator computes
 * it per row: the label scaled by {@code 1 / labelStd} (its centering is in the margin's constant part, see
 * {@link LeastSquaresObjective}), {@code diff = margin - label / labelStd}, the loss {@code weight * diff^2 / 2} and
 * the multiplier {@code weight * diff}.
 */
final class SquaredLoss implements MarginLoss {
    private static final long serialVersionUID = 1L;

    /** {@code -1 / labelStd}, as MLlib scales the labels. */
    private final double labelFactor;

    /** @param labelStd the label's std (positive) */
    SquaredLoss(final double labelStd) {
        if (!(labelStd > 0) || !Double.isFinite(labelStd)) {
            throw new IllegalArgumentException("the label's std must be positive and finite, got " + labelStd);
        }
        this.labelFactor = -1.0 / labelStd;
    }

    @Override
    public double loss(final double weight, final double label, final double margin) {
        final double diff = margin + labelFactor * label;
        return weight * diff * diff / 2;
    }

    @Override
    public double multiplier(final double weight, final double label, final double margin) {
        return weight * (margin + labelFactor * label);
    }
}

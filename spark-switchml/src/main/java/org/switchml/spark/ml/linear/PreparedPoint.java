package org.switchml.spark.ml.linear;

/**
 * What every partition's evaluation at one point needs before it reads its rows: the coefficients as the
 * unscaled features see them ({@code w_j / std_j}, laid out as the point) and each set's margin of an all-zero
 * row. It depends only on the point, so the tasks of one executor share it.
 */
public final class PreparedPoint {
    final double[] effective;
    final double[] offset;
    private final int sets;
    private double[] transposed;

    PreparedPoint(final double[] effective, final double[] offset, final int sets) {
        this.effective = effective;
        this.offset = offset;
        this.sets = sets;
    }

    /** The effective coefficients' array, which the next evaluation may reuse. */
    double[] effective() {
        return effective;
    }

    /**
     * The effective coefficients as a F x K column-major matrix ({@code c * F + j}), for the dense multinomial
     * kernel; made on first use (only dense batches need it).
     */
    synchronized double[] transposed() {
        if (transposed == null) {
            final int f = effective.length / sets;
            final double[] t = new double[effective.length];
            for (int j = 0; j < f; j++) {
                for (int c = 0; c < sets; c++) {
                    t[c * f + j] = effective[j * sets + c];
                }
            }
            transposed = t;
        }
        return transposed;
    }
}

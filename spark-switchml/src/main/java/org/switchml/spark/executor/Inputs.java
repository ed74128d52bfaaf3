package org.switchml.spark.executor;

/** Checks of what a task is about to send through the switch: a clear error, never a silent sum. */
public final class Inputs {
    private Inputs() {}

    /**
     * Fails when {@code v} has the wrong length or holds NaN or an infinity, naming the first bad index
     * and {@code what}. Such input cannot be summed exactly, and retrying would not help.
     */
    public static void requireVector(final double[] v, final int length, final String what) {
        if (v == null || v.length != length) {
            throw new BadInputException(
                    what + " has length " + (v == null ? "null" : v.length) + ", expected " + length);
        }
        for (int i = 0; i < v.length; i++) {
            if (!Double.isFinite(v[i])) {
                throw new BadInputException(
                        what + " has " + v[i] + " at index " + i + "; the switch sums finite values only");
            }
        }
    }

    /** Bad input to a switch call: the call fails at once (no stage retry). */
    public static final class BadInputException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadInputException(final String message) {
            super(message);
        }
    }
}

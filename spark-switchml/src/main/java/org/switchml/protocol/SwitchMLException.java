package org.switchml.protocol;

/** Base of every error spark-switchml raises about the aggregation itself (not about bad arguments). */
public class SwitchMLException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SwitchMLException(final String message) {
        super(message);
    }

    public SwitchMLException(final String message, final Throwable cause) {
        super(message, cause);
    }
}

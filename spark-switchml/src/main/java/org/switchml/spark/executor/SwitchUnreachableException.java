package org.switchml.spark.executor;

import org.switchml.protocol.SwitchMLException;

/** The switch could not be reached from a task: registration failed, or no result within the bound. */
public final class SwitchUnreachableException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    SwitchUnreachableException(final String message) {
        super(message);
    }

    SwitchUnreachableException(final String message, final Throwable cause) {
        super(message, cause);
    }
}

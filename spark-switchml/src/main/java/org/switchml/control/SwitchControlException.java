package org.switchml.control;

import io.grpc.Status;
import java.util.List;
import org.switchml.protocol.SwitchMLException;

/**
 * A control-plane operation failed: the switch answered with an error status, could not be reached, or
 * the controller refused (no free resource, not primary, ...). {@link #code()} is the gRPC status code;
 * for a Write whose individual updates failed, {@link #updateErrors()} holds each failed update's code.
 */
public class SwitchControlException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    /** One failed update of a Write batch (P4Runtime reports them as p4.v1.Error details). */
    public record UpdateError(int index, Status.Code code, String message) {}

    private final Status.Code code;
    private final transient List<UpdateError> updateErrors;

    public SwitchControlException(final Status.Code code, final String message) {
        this(code, message, List.of(), null);
    }

    public SwitchControlException(
            final Status.Code code, final String message, final List<UpdateError> updateErrors, final Throwable cause) {
        super(message, cause);
        this.code = code;
        this.updateErrors = List.copyOf(updateErrors);
    }

    /** gRPC status code of the failure (UNKNOWN for a Write batch with failed updates, as P4Runtime does). */
    public Status.Code code() {
        return code;
    }

    /** The failed updates of a Write batch, in request order; empty otherwise. */
    public List<UpdateError> updateErrors() {
        return updateErrors;
    }
}

package org.switchml.service;

/**
 * A job service refused a request or could not be reached. The message names the service and says why, as the
 * service put it.
 */
public final class JobServiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a request failed, in the terms a driver acts on. */
    public enum Kind {
        /** The service did not answer (down, unreachable, timed out). */
        UNREACHABLE,
        /** No credential, or a wrong one. */
        NOT_AUTHENTICATED,
        /** The switch stayed full for the request's whole admission wait. */
        SWITCH_FULL,
        /** The request is over one of the service's quotas (the message names it); asking again will not help. */
        OVER_QUOTA,
        /** The session is unknown: it expired (its jobs are gone) or was never opened. */
        SESSION_LOST,
        /** The request itself is wrong (a job id outside the session's range, a bad k). */
        REFUSED
    }

    private final Kind kind;

    public JobServiceException(final Kind kind, final String message, final Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}

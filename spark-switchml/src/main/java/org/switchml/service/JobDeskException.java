package org.switchml.service;

/**
 * The job desk refused a request, or the switch refused what the desk asked of it. {@link #kind()} says which
 * rule, in the desk's terms; the gRPC face maps each kind to a status code. The message names the switch and
 * the rule, and what the caller's own session holds, never another session or tenant.
 */
public final class JobDeskException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    public enum Kind {
        /** No such session: it expired (its lease lapsed) or was closed. */
        NO_SESSION,
        /** The request names what is not the session's (a job id outside its range). */
        NOT_YOURS,
        /** The request is wrong in itself, or can never fit this switch. */
        INVALID,
        /** The request is over a quota; waiting would not help. */
        OVER_QUOTA,
        /** The switch stayed full for the request's whole admission wait. */
        FULL,
        /** Another request of the session for the same job is in progress, or too many reads are. */
        BUSY,
        /** The request was withdrawn before it was served (its caller went away, or removed the job). */
        CANCELLED,
        /** The desk is closing. */
        SHUTTING_DOWN,
        /** The switch refused a write, or did not answer; {@link #switchCode()} is its status. */
        SWITCH
    }

    private final Kind kind;
    private final String switchCode;

    JobDeskException(final Kind kind, final String message) {
        this(kind, message, null, null);
    }

    JobDeskException(final Kind kind, final String message, final String switchCode, final Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.switchCode = switchCode;
    }

    public Kind kind() {
        return kind;
    }

    /** For {@link Kind#SWITCH}: the switch's status code name (e.g. {@code DEADLINE_EXCEEDED}); else null. */
    public String switchCode() {
        return switchCode;
    }
}

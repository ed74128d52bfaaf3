package org.switchml.dataplane.p4runtime;

import io.grpc.Status;

/** A request that fails with a status: thrown inside the service's lock, turned into the RPC's answer. */
final class Failure extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Status status;

    Failure(final Status.Code code, final String message) {
        super(message, null, false, false);
        this.status = Status.fromCode(code).withDescription(message);
    }
}

package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.StreamError;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.StreamOtherError;
import p4.v1.P4RuntimeOuterClass.Uint128;

/**
 * Primary election over the StreamChannels of one device: the open streams, which of them is primary
 * (the highest election id), telling every arbitrated controller when that changes, and the check that
 * a Write or a pipeline push comes from the primary.
 *
 * <p>Guarded by the service's lock: stream callbacks take it themselves, every other method is called
 * with it held.
 */
final class Arbitration {
    private final Object lock;
    private final long deviceId;
    private final List<Session> sessions = new ArrayList<>();

    /** One StreamChannel. */
    private static final class Session {
        final StreamObserver<StreamMessageResponse> out;
        Uint128 electionId;
        boolean arbitrated;
        boolean closed;

        Session(final StreamObserver<StreamMessageResponse> out) {
            this.out = out;
        }
    }

    Arbitration(final Object lock, final long deviceId) {
        this.lock = lock;
        this.deviceId = deviceId;
    }

    /** Opens a StreamChannel answering on {@code out}; returns what receives the controller's messages. */
    StreamObserver<StreamMessageRequest> open(final StreamObserver<StreamMessageResponse> out) {
        final Session session = new Session(out);
        synchronized (lock) {
            sessions.add(session);
        }
        return new StreamObserver<>() {
            @Override
            public void onNext(final StreamMessageRequest value) {
                synchronized (lock) {
                    if (session.closed) {
                        return;
                    }
                    if (value.hasArbitration()) {
                        arbitrate(session, value.getArbitration());
                    } else {
                        // Packet I/O and digests: switchml.p4 has no controller packets.
                        session.out.onNext(StreamMessageResponse.newBuilder()
                                .setError(StreamError.newBuilder()
                                        .setCanonicalCode(Status.Code.UNIMPLEMENTED.value())
                                        .setMessage("this switch supports only arbitration on the stream, not "
                                                + value.getUpdateCase())
                                        .setOther(StreamOtherError.getDefaultInstance()))
                                .build());
                    }
                }
            }

            @Override
            public void onError(final Throwable t) {
                synchronized (lock) {
                    leave(session);
                }
            }

            @Override
            public void onCompleted() {
                synchronized (lock) {
                    if (!session.closed) {
                        session.out.onCompleted();
                    }
                    leave(session);
                }
            }
        };
    }

    private void arbitrate(final Session session, final MasterArbitrationUpdate update) {
        if (update.getDeviceId() != deviceId) {
            end(
                    session,
                    Status.Code.NOT_FOUND,
                    "no device " + Long.toUnsignedString(update.getDeviceId()) + " here: this switch is device "
                            + deviceId);
            return;
        }
        if (update.hasRole()
                && (update.getRole().getId() != 0 || update.getRole().hasConfig())) {
            end(
                    session,
                    Status.Code.UNIMPLEMENTED,
                    "only the default role is supported, got role id "
                            + update.getRole().getId());
            return;
        }
        final Uint128 id = update.hasElectionId() ? update.getElectionId() : null;
        if (id != null) {
            for (final Session s : sessions) {
                if (s != session && !s.closed && s.electionId != null && s.electionId.equals(id)) {
                    end(
                            session,
                            Status.Code.INVALID_ARGUMENT,
                            "election id " + text(id) + " is already used by " + "another controller of device "
                                    + deviceId);
                    return;
                }
            }
        }
        final Session before = primary();
        session.electionId = id;
        session.arbitrated = true;
        final Session after = primary();
        if (before != after) {
            for (final Session s : sessions) {
                if (s.arbitrated && !s.closed) {
                    tell(s, after);
                }
            }
        } else {
            tell(session, after);
        }
    }

    /** Sends {@code s} the arbitration state: OK if primary, ALREADY_EXISTS if backup, NOT_FOUND if none. */
    private void tell(final Session s, final Session primary) {
        final MasterArbitrationUpdate.Builder u =
                MasterArbitrationUpdate.newBuilder().setDeviceId(deviceId);
        final com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder();
        if (primary == null) {
            st.setCode(Status.Code.NOT_FOUND.value()).setMessage("no primary controller");
        } else {
            u.setElectionId(primary.electionId);
            if (s == primary) {
                st.setCode(Status.Code.OK.value()).setMessage("primary");
            } else {
                st.setCode(Status.Code.ALREADY_EXISTS.value())
                        .setMessage("backup: the primary has election id " + text(primary.electionId));
            }
        }
        s.out.onNext(StreamMessageResponse.newBuilder()
                .setArbitration(u.setStatus(st))
                .build());
    }

    private void end(final Session session, final Status.Code code, final String message) {
        session.out.onError(Status.fromCode(code).withDescription(message).asRuntimeException());
        leave(session);
    }

    private void leave(final Session session) {
        if (!sessions.contains(session)) {
            return;
        }
        final Session before = primary();
        session.closed = true;
        sessions.remove(session);
        final Session after = primary();
        if (before == session) {
            for (final Session s : sessions) {
                if (s.arbitrated && !s.closed) {
                    tell(s, after);
                }
            }
        }
    }

    private Session primary() {
        Session best = null;
        for (final Session s : sessions) {
            if (!s.closed && s.electionId != null && (best == null || compare(s.electionId, best.electionId) > 0)) {
                best = s;
            }
        }
        return best;
    }

    /** Refuses {@code what} unless election id {@code id} is the primary's. */
    void checkPrimary(final boolean hasId, final Uint128 id, final String what) throws Failure {
        final Session p = primary();
        if (p == null) {
            throw new Failure(
                    Status.Code.PERMISSION_DENIED,
                    what + " refused: no primary controller (open a "
                            + "StreamChannel and send a MasterArbitrationUpdate first)");
        }
        if (!hasId || !p.electionId.equals(id)) {
            throw new Failure(
                    Status.Code.PERMISSION_DENIED,
                    what + " refused: election id " + (hasId ? text(id) : "(none)") + " is not the primary's ("
                            + text(p.electionId) + ")");
        }
    }

    /** Ends every stream (server shutdown). */
    void closeAll() {
        synchronized (lock) {
            for (final Session s : List.copyOf(sessions)) {
                try {
                    s.out.onError(Status.UNAVAILABLE
                            .withDescription("switch shutting down")
                            .asRuntimeException());
                } catch (final RuntimeException ignored) {
                    // Already cancelled by the client.
                }
                s.closed = true;
            }
            sessions.clear();
        }
    }

    private static int compare(final Uint128 a, final Uint128 b) {
        final int high = Long.compareUnsigned(a.getHigh(), b.getHigh());
        return high != 0 ? high : Long.compareUnsigned(a.getLow(), b.getLow());
    }

    private static String text(final Uint128 id) {
        return id.getHigh() == 0
                ? Long.toUnsignedString(id.getLow())
                : Long.toUnsignedString(id.getHigh()) + ":" + Long.toUnsignedString(id.getLow());
    }
}

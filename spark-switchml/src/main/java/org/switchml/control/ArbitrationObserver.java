package org.switchml.control;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.Uint128;

/** Receives the switch's arbitration answers on the StreamChannel for the controller's whole life. */
final class ArbitrationObserver implements StreamObserver<StreamMessageResponse> {
    /** The switch's first answer: whether the controller became primary, or why not. */
    final CompletableFuture<MasterArbitrationUpdate> first = new CompletableFuture<>();

    volatile boolean primary;
    private volatile String lostBecause = "";

    @Override
    public void onNext(final StreamMessageResponse value) {
        if (value.hasArbitration()) {
            final MasterArbitrationUpdate u = value.getArbitration();
            synchronized (this) {
                primary = u.getStatus().getCode() == Status.Code.OK.value();
                if (!primary) {
                    lostBecause = ": the primary now has election id " + text(u.getElectionId());
                }
                notifyAll();
            }
            first.complete(u);
        }
    }

    @Override
    public void onError(final Throwable t) {
        final Status s = Status.fromThrowable(t);
        synchronized (this) {
            primary = false;
            lostBecause = ": stream closed with " + s.getCode() + " " + Objects.toString(s.getDescription(), "");
            notifyAll();
        }
        first.completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
        synchronized (this) {
            primary = false;
            lostBecause = ": the switch closed the stream";
            notifyAll();
        }
        first.completeExceptionally(Status.UNAVAILABLE
                .withDescription("stream closed by the switch")
                .asException());
    }

    /** Waits, at most {@code timeoutMs}, until the switch says this controller is primary. */
    synchronized boolean awaitPrimary(final long timeoutMs) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!primary) {
            final long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }

    /** Why the controller is no longer primary, for messages ("" while it never lost it). */
    String lost() {
        return lostBecause;
    }

    /** An election id as written in messages: its low 64 bits, or high:low. */
    static String text(final Uint128 id) {
        return id.getHigh() == 0
                ? Long.toUnsignedString(id.getLow())
                : Long.toUnsignedString(id.getHigh()) + ":" + Long.toUnsignedString(id.getLow());
    }
}

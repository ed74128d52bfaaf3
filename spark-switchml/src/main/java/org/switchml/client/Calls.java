package org.switchml.client;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.switchml.protocol.SwitchMLException;

/** The calling thread's wait for the operations of one call (one per shard), in bounded steps. */
final class Calls {
    /** How often the waiting thread looks at stalled operations and at the event loop's progress. */
    private static final long STEP_MS = 200;

    private Calls() {}

    /**
     * Waits until every operation completed, or the first one failed: then the others are cancelled and its
     * error is thrown. An operation that asked before timing out is decided here: when it had no result for its
     * timeout, {@code waitOn} (asked once for all that stalled) says wait on or give up. An event loop that
     * stopped making progress fails the call after the timeout and a grace; an interrupt cancels it.
     */
    static void await(
            final List<AllReduceOperation> ops,
            final long timeoutMs,
            final BooleanSupplier waitOn,
            final String describe) {
        final CompletableFuture<Void> all = new CompletableFuture<>();
        final CompletableFuture<?>[] each = new CompletableFuture<?>[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            each[i] = ops.get(i).future();
            // The first failure ends the wait: the other shards' operations cannot complete without this one's
            // workers, and waiting for their own timeouts would only delay the error.
            each[i].whenComplete((v, e) -> {
                if (e != null) {
                    all.completeExceptionally(e);
                }
            });
        }
        CompletableFuture.allOf(each).whenComplete((v, e) -> {
            // Dependents run in any order: this one may run before the failure's own callback above.
            if (e == null) {
                all.complete(null);
            } else {
                all.completeExceptionally(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
            }
        });
        final long graceNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs + 5_000);
        try {
            while (true) {
                try {
                    all.get(STEP_MS, TimeUnit.MILLISECONDS);
                    return;
                } catch (final TimeoutException e) {
                    step(ops, waitOn, graceNs, describe);
                }
            }
        } catch (final InterruptedException e) {
            cancel(ops, new SwitchMLException(describe + ": interrupted"));
            Thread.currentThread().interrupt();
            throw new SwitchMLException(describe + ": allreduce interrupted", e);
        } catch (final CancellationException e) {
            cancel(ops, new SwitchMLException(describe + ": allreduce cancelled"));
            throw new SwitchMLException(describe + ": allreduce cancelled", e);
        } catch (final ExecutionException e) {
            final Throwable c =
                    e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                            ? e.getCause().getCause()
                            : e.getCause();
            cancel(
                    ops,
                    new SwitchMLException(describe + ": another shard's part of the call failed: " + c.getMessage()));
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new SwitchMLException(describe + ": " + c, c);
        }
    }

    private static void step(
            final List<AllReduceOperation> ops,
            final BooleanSupplier waitOn,
            final long graceNs,
            final String describe) {
        boolean anyStalled = false;
        for (final AllReduceOperation op : ops) {
            anyStalled |= !op.future().isDone() && op.stalled();
        }
        if (waitOn != null && anyStalled) {
            boolean on;
            try {
                on = waitOn.getAsBoolean();
            } catch (final RuntimeException askFailed) {
                on = false;
            }
            for (final AllReduceOperation op : ops) {
                if (!op.future().isDone() && op.stalled()) {
                    if (on) {
                        op.waitOn();
                    } else {
                        op.giveUp();
                    }
                }
            }
            return;
        }
        final long now = System.nanoTime();
        for (final AllReduceOperation op : ops) {
            if (!op.future().isDone() && !op.stalled() && now - op.lastProgressNanos() > graceNs) {
                op.cancel(new SwitchMLException(describe + ": worker event loop stopped making progress"));
            }
        }
    }

    private static void cancel(final List<AllReduceOperation> ops, final RuntimeException why) {
        for (final AllReduceOperation op : ops) {
            if (!op.future().isDone()) {
                op.cancel(why);
            }
        }
    }
}

package org.switchml.spark.ml.linear;

import java.util.HashMap;
import java.util.Map;

/**
 * What the tasks of one fit share in one JVM between evaluations: the pending point of the current state
 * ({@link Pending}) and the coefficient-sized arrays an evaluation needs ({@link Workspace}). With 10^7
 * coefficients each of these arrays is 80 MB: computing the point once per executor instead of once per
 * task saves each further task two sweeps and two arrays per evaluation, and keeping the arrays from one
 * evaluation to the next spares the garbage collector the work (which takes CPU from the fit).
 *
 * <p>Lifetime: the cache belongs to the {@link Lease}s on it. Each task's copy of {@link FitBody} (Spark
 * deserializes one per task) takes a lease at its first evaluation and closes it when its stage of the loop
 * ends or its task completes; where updates run on the driver (the loop's fallback), the driver's copy holds
 * one until that run ends. The first lease of a fit opens its cache and the last one closed frees it: in a
 * stage of the loop, all of an executor's tasks hold a lease from their first evaluation to the stage's end,
 * so they share one cache for exactly that long.
 */
final class EvaluationCache {
    /** The caches with a lease open, by fit. */
    private static final Map<Long, EvaluationCache> OPEN = new HashMap<>();

    private final long fitId;
    /** Leases open on this cache; guarded by {@link #OPEN}. */
    private int leases;
    /** The pending point of the state being evaluated, or null; guarded by {@code this}. */
    private Pending pending;

    private final Workspace workspace = new Workspace();

    private EvaluationCache(final long fitId) {
        this.fitId = fitId;
    }

    /** A lease on the cache of fit {@code fitId} in this JVM, opening it if no lease is open. */
    static Lease lease(final long fitId) {
        synchronized (OPEN) {
            final EvaluationCache cache = OPEN.computeIfAbsent(fitId, EvaluationCache::new);
            cache.leases++;
            return new Lease(cache);
        }
    }

    /** One holder's claim on a cache: the cache lives while a lease on it is open. */
    static final class Lease implements AutoCloseable {
        private final EvaluationCache cache;
        private boolean closed;

        private Lease(final EvaluationCache cache) {
            this.cache = cache;
        }

        /** The cache this lease keeps open. */
        EvaluationCache cache() {
            return cache;
        }

        /** Gives the lease up (again: nothing); the last one frees the cache. */
        @Override
        public void close() {
            synchronized (OPEN) {
                if (closed) {
                    return;
                }
                closed = true;
                if (--cache.leases == 0) {
                    OPEN.remove(cache.fitId);
                }
            }
        }
    }

    /**
     * The pending point of {@code state}, which is at evaluation {@code evaluations}: the one already
     * computed for this very array (identity) and evaluation count, else a new, empty one that replaces it.
     * The loop hands all tasks of an executor the same state array, and the update changes it only after
     * they have all contributed.
     */
    synchronized Pending pending(final double[] state, final double evaluations) {
        if (pending == null || pending.state != state || pending.evaluations != evaluations) {
            pending = new Pending(state, evaluations);
        }
        return pending;
    }

    /** Forgets the pending point: the update has consumed it. */
    synchronized void dropPending() {
        pending = null;
    }

    /** The coefficient-sized arrays of this fit's evaluations. */
    Workspace workspace() {
        return workspace;
    }

    /**
     * The pending point of one state and what the evaluation there needs ({@link PreparedPoint}),
     * filled by the first task to ask (holding the entry's lock) and read by the others and by the update.
     */
    static final class Pending {
        private final double[] state;
        private final double evaluations;
        double[] point;
        PreparedPoint prepared;

        private Pending(final double[] state, final double evaluations) {
            this.state = state;
            this.evaluations = evaluations;
        }
    }

    /**
     * The arrays an evaluation needs, kept for the next one: the pending point and the effective
     * coefficients of the last evaluation, once its update has consumed them, and the gradient. An array
     * is either here or in use by one evaluation, never both.
     */
    static final class Workspace {
        private double[] point;
        private double[] effective;
        private double[] grad;

        /** The point array to fill ({@code n} elements), taken out. */
        synchronized double[] takePoint(final int n) {
            final double[] p = point != null ? point : new double[n];
            point = null;
            return p;
        }

        /** The effective-coefficients array, or null (then {@code prepare} makes one), taken out. */
        synchronized double[] takeEffective() {
            final double[] e = effective;
            effective = null;
            return e;
        }

        /** The gradient array to fill ({@code n} elements), taken out. */
        synchronized double[] takeGrad(final int n) {
            final double[] g = grad != null ? grad : new double[n];
            grad = null;
            return g;
        }

        /** Hands back what an evaluation used, once nothing reads it any more. */
        synchronized void giveBack(final double[] point, final double[] effective, final double[] grad) {
            this.point = point;
            this.effective = effective;
            this.grad = grad;
        }
    }
}

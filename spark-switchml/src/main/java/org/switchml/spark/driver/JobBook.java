package org.switchml.spark.driver;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.spark.registrar.JobIds;
import org.switchml.spark.registrar.JobRegistrar;

/**
 * The driver's switch jobs: their ids, their installation and removal on the switch (on one thread of
 * their own, off the tasks' critical path and off Spark's RPC threads), the generations each id was
 * installed under, and the final counters of a removed job when the switch reports them.
 */
final class JobBook implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JobBook.class);

    private final RegistrarLink link;
    private final AtomicLong nextJobId;
    private final Map<Integer, List<Integer>> generations = new ConcurrentHashMap<>();
    /**
     * The final counters of each job's latest generation: summed over its shards when it had several (each
     * executor reports its shard's part when the stage ends there), replaced by a later generation's.
     */
    private final Map<Integer, GenerationCounters> finalCounters = new ConcurrentHashMap<>();
    /** Per job id: its latest sharded generation and how many shards report counters for it. */
    private final Map<Integer, int[]> expectedShards = new ConcurrentHashMap<>();
    /** Sum of every removed job's final counters, for the metrics source (a map walk per report is O(jobs)). */
    private final AtomicReference<JobCounters> removedTotals = new AtomicReference<>(JobCounters.ZERO);
    /** Ids installed and not yet removed: their counters are read live for {@link #totals()}. */
    private final Set<Integer> installedIds = ConcurrentHashMap.newKeySet();

    private final Map<Integer, Future<?>> removals = new ConcurrentHashMap<>();
    private final ExecutorService registrations = Executors.newSingleThreadExecutor(r -> {
        final Thread t = new Thread(r, "switchml-register");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;

    JobBook(final RegistrarLink link) {
        this.link = link;
        // A random start within the registrar's range: ids of an earlier run are unlikely to come back.
        this.nextJobId = new AtomicLong(new SplittableRandom().nextInt(1 << 30));
    }

    /** A new id in the switch's range for this application (any id while the switch is unreachable). */
    int newJobId() {
        final JobRegistrar r = link.current();
        return (r == null ? JobIds.ANY : r.jobIds()).id(nextJobId.incrementAndGet());
    }

    /**
     * Installs a job synchronously; returns the spec as installed.
     *
     * @throws IllegalStateException when the switch is unreachable or the book closed
     */
    JobSpec register(final JobSpec spec) {
        if (closed) {
            throw new IllegalStateException("spark-switchml driver runtime is closed");
        }
        final JobRegistrar r = link.available();
        if (r == null) {
            throw new IllegalStateException(link.unreachableReason());
        }
        final JobSpec installed;
        try {
            installed = r.register(spec);
        } catch (final RuntimeException e) {
            if (!r.reachable()) {
                link.lost(r, e.getMessage());
            }
            throw e;
        }
        generations
                .computeIfAbsent(spec.jobId(), id -> Collections.synchronizedList(new ArrayList<>()))
                .add(spec.generation());
        installedIds.add(spec.jobId());
        return installed;
    }

    /** The counters of one generation of a job, and how many of its shards reported them. */
    private record GenerationCounters(int generation, JobCounters counters, int reports) {}

    /**
     * Records a generation of a job whose parts the executors install on their own shards (no registrar is
     * involved), and that {@code reports} shards will report its counters.
     */
    void recordShardedGeneration(final int jobId, final int generation, final int reports) {
        generations
                .computeIfAbsent(jobId, id -> Collections.synchronizedList(new ArrayList<>()))
                .add(generation);
        expectedShards.put(jobId, new int[] {generation, reports});
    }

    /** Adds one shard's counters of generation {@code generation} of a job. */
    void addCounters(final int jobId, final int generation, final JobCounters c) {
        finalCounters.compute(jobId, (id, old) -> {
            if (old == null || old.generation() < generation) {
                return new GenerationCounters(generation, c, 1);
            }
            return old.generation() == generation
                    ? new GenerationCounters(generation, old.counters().plus(c), old.reports() + 1)
                    : old;
        });
        removedTotals.accumulateAndGet(c, JobCounters::plus);
        synchronized (finalCounters) {
            finalCounters.notifyAll();
        }
    }

    /** The latest generation registered for a job id, or -1. */
    private int latestGeneration(final int jobId) {
        final List<Integer> g = generationsOf(jobId);
        return g.isEmpty() ? -1 : g.get(g.size() - 1);
    }

    /** Runs {@code work} on the registration thread, after what is queued there. */
    <T> CompletableFuture<T> onRegistrationThread(final Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, registrations);
    }

    /** Removes a finished job in the background, keeping its final counters when the switch reports them. */
    void remove(final int jobId) {
        final JobRegistrar r = link.current();
        if (r == null || closed) {
            return;
        }
        // Off the caller's path: the call returns while the switch forgets the job. Counter reads wait.
        final FutureTask<Void> f = new FutureTask<>(() -> removeNow(r, jobId), null);
        removals.put(jobId, f);
        try {
            registrations.execute(f);
        } catch (final RejectedExecutionException e) {
            removals.remove(jobId); // closing
        }
    }

    /** Removes a job from {@code r} on the calling thread. */
    void removeNow(final JobRegistrar r, final int jobId) {
        try {
            final Optional<JobCounters> last = r.counters(jobId);
            // Out of the live set before its counters join the removed ones: a read of totals() in between
            // misses the job for a moment rather than counting it twice.
            installedIds.remove(jobId);
            last.ifPresent(c -> addCounters(jobId, Math.max(0, latestGeneration(jobId)), c));
            r.remove(jobId);
        } catch (final RuntimeException e) {
            LOG.debug("spark-switchml: cannot remove job {}: {}", Integer.toUnsignedString(jobId), e.toString());
        } finally {
            removals.remove(jobId);
        }
    }

    /** The generations registered for a job id, in order (one per barrier stage attempt). */
    List<Integer> generationsOf(final int jobId) {
        final List<Integer> g = generations.get(jobId);
        if (g == null) {
            return List.of();
        }
        synchronized (g) {
            return List.copyOf(g);
        }
    }

    /** The switch's counters summed over every removed job whose switch reports them. */
    JobCounters removedTotals() {
        return removedTotals.get();
    }

    /**
     * The switch's counters summed over every job of this book, the removed ones and, read now from the switch,
     * the installed ones (zero when the switch does not count jobs). A job being removed may be missed for a
     * moment, so two reads are not always in order.
     */
    JobCounters totals() {
        JobCounters sum = removedTotals.get();
        final JobRegistrar r = link.current();
        if (r == null || !r.countsJobs()) {
            return sum;
        }
        for (final int id : installedIds) {
            try {
                sum = sum.plus(r.counters(id).orElse(JobCounters.ZERO));
            } catch (final RuntimeException e) {
                LOG.debug(
                        "spark-switchml: cannot read the counters of job {}: {}",
                        Integer.toUnsignedString(id),
                        e.toString());
            }
        }
        return sum;
    }

    /** How long {@link #finalCounters} waits for the shards of a sharded job to report. */
    private static final long SHARD_REPORT_WAIT_NS = TimeUnit.SECONDS.toNanos(2);

    /**
     * Counters of a removed job (when its switch reports them), or null. For a sharded job, the sum over its
     * shards, once each reported (at most {@value #SHARD_REPORT_WAIT_NS} ns: a report that does not come, from an
     * executor lost at the end, leaves it out).
     */
    JobCounters finalCounters(final int jobId) {
        awaitRemoval(jobId);
        final int[] expected = expectedShards.get(jobId);
        if (expected != null) {
            final long deadline = System.nanoTime() + SHARD_REPORT_WAIT_NS;
            synchronized (finalCounters) {
                while (!reported(jobId, expected) && System.nanoTime() - deadline < 0) {
                    try {
                        finalCounters.wait(20); // woken by addCounters; bounded either way
                    } catch (final InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
        }
        final GenerationCounters g = finalCounters.get(jobId);
        return g == null ? null : g.counters();
    }

    private boolean reported(final int jobId, final int[] expected) {
        final GenerationCounters g = finalCounters.get(jobId);
        return g != null
                && (g.generation() > expected[0] || (g.generation() == expected[0] && g.reports() >= expected[1]));
    }

    /** Waits (at most 10 s) until a removal of {@code jobId} that is under way has finished. */
    void awaitRemoval(final int jobId) {
        final Future<?> pending = removals.get(jobId);
        if (pending != null) {
            try {
                pending.get(10, TimeUnit.SECONDS);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (final ExecutionException | TimeoutException e) {
                LOG.debug(
                        "spark-switchml: removal of job {} did not finish: {}",
                        Integer.toUnsignedString(jobId),
                        e.toString());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        registrations.shutdownNow();
    }
}

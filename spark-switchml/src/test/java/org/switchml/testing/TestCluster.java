package org.switchml.testing;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;

/** A software switch on loopback plus worker clients, for tests. */
public final class TestCluster implements AutoCloseable {
    public final SoftwareSwitch sw;

    private TestCluster(final SoftwareSwitch sw) {
        this.sw = sw;
    }

    public static TestCluster start(final SwitchOptions options) {
        return new TestCluster(SoftwareSwitch.start(options));
    }

    /** The workers of one job; closing it closes their sockets. */
    public record Job(JobSpec spec, List<SwitchMLClient> clients, List<JobSession> sessions) implements AutoCloseable {
        public JobSession session(final int rank) {
            return sessions.get(rank);
        }

        @Override
        public void close() {
            for (final SwitchMLClient c : clients) {
                c.close();
            }
        }
    }

    /** Opens n workers, registers the job with the switch, and joins every worker. */
    public Job job(
            final int jobId,
            final int generation,
            final int n,
            final int k,
            final int pool,
            final ClientOptions options) {
        final List<SwitchMLClient> workers = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            final SwitchMLClient c = SwitchMLClient.open(options.withFaults(
                    options.faults().withSeed(options.faults().seed() + 7919L * r)));
            workers.add(c);
            endpoints.add(c.localAddress());
        }
        final JobSpec spec = new JobSpec(jobId, generation, k, pool, endpoints);
        sw.registerJob(spec);
        final List<JobSession> sessions = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            sessions.add(workers.get(r).join(spec, r, sw.address()));
        }
        return new Job(spec, workers, sessions);
    }

    /** A job whose workers reach the switch through {@code relay}; closing it closes the workers, then the relay. */
    public record RelayedJob(Job job, SwitchRelay relay) implements AutoCloseable {
        @Override
        public void close() {
            try {
                job.close();
            } finally {
                relay.close();
            }
        }
    }

    /**
     * Like {@link #job}, but the workers reach the switch through a {@link SwitchRelay}: the switch registers the
     * relay's faces as the job's workers, and the workers join the same registration (its secret) at the relay's
     * lanes. The switch's address as the workers know it is {@code relay().address()}.
     */
    public RelayedJob relayedJob(
            final int jobId,
            final int generation,
            final int n,
            final int k,
            final int pool,
            final ClientOptions options) {
        final List<SwitchMLClient> workers = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        SwitchRelay relay = null;
        try {
            for (int r = 0; r < n; r++) {
                final SwitchMLClient c = SwitchMLClient.open(options.withFaults(
                        options.faults().withSeed(options.faults().seed() + 7919L * r)));
                workers.add(c);
                endpoints.add(c.localAddress());
            }
            relay = SwitchRelay.start(sw.address(), endpoints);
            final JobSpec atSwitch = new JobSpec(jobId, generation, k, pool, relay.workerFaces());
            sw.registerJob(atSwitch);
            final JobSpec spec = new JobSpec(jobId, generation, atSwitch.secret(), k, pool, endpoints);
            final List<JobSession> sessions = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                sessions.add(workers.get(r).join(spec, r, relay.address()));
            }
            return new RelayedJob(new Job(spec, workers, sessions), relay);
        } catch (final RuntimeException e) {
            for (final SwitchMLClient c : workers) {
                c.close();
            }
            if (relay != null) {
                relay.close();
            }
            throw e;
        }
    }

    /** Runs {@code work(rank)} for every rank on its own thread; bounded; rethrows the first failure. */
    public static <T> List<T> parallel(final int n, final IntFunction<T> work) {
        final ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, n));
        try {
            final List<Future<T>> futures = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                final int rank = r;
                futures.add(pool.submit(() -> work.apply(rank)));
            }
            final List<T> out = new ArrayList<>();
            for (final Future<T> f : futures) {
                out.add(f.get(300, TimeUnit.SECONDS));
            }
            return out;
        } catch (final ExecutionException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw new AssertionError(e.getCause());
        } catch (final InterruptedException | TimeoutException e) {
            throw new AssertionError("workers did not finish", e);
        } finally {
            pool.shutdownNow();
        }
    }

    @Override
    public void close() {
        sw.close();
    }
}

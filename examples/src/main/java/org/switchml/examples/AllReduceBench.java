package org.switchml.examples;

import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.switchml.client.ClientOptions;
import org.switchml.client.ClientStats;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.transport.FaultPlan;
import org.switchml.transport.Transports;

/**
 * Allreduce goodput benchmark: the aggregating software switch against the null reflector, on loopback,
 * in one process. See {@link BenchOptions} ({@code --help}) and docs/benchmarks.md.
 *
 * <p>For every cell (worker count n, vector length) it opens n worker sockets, registers one job with
 * the aggregating switch and one with the reflector (same k, pool, sockets, data and fault plan), and
 * runs warm-ups and timed allreduces, alternating which switch goes first. One run is timed as wall
 * time from the release of the n worker threads until the last worker has its result vector; the cell
 * reports the median of the timed runs. Verification, when asked for, happens between runs, untimed.
 */
public final class AllReduceBench {
    static final int EXIT_OK = 0;
    static final int EXIT_VERIFY_FAILED = 1;
    static final int EXIT_USAGE = Cli.EXIT_USAGE;
    static final int EXIT_RUN_FAILED = 3;

    private static final String HOST = "127.0.0.1";

    /** The two switches a cell compares. */
    enum Target {
        SWITCH("switch"),
        REFLECTOR("reflector");

        final String label;

        Target(final String label) {
            this.label = label;
        }
    }

    private final BenchOptions options;
    private final PrintStream out;
    /** One fault plan per loss probability of --loss, in its order. */
    private final List<FaultPlan> plans = new ArrayList<>();
    /** Per fault plan: the aggregating switch and the reflector (a switch's faults are fixed when it starts). */
    private final List<SoftwareSwitch> aggregating = new ArrayList<>();

    private final List<SoftwareSwitch> reflector = new ArrayList<>();
    private EventLoopGroup clientGroup;
    private int nextJobId = 1;

    private AllReduceBench(final BenchOptions options, final PrintStream out) {
        this.options = options;
        this.out = out;
        for (final double loss : options.losses) {
            plans.add(new FaultPlan(loss, options.dup, options.reorder, 0, options.seed));
        }
    }

    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the benchmark; returns the process exit code. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        final BenchOptions options = new BenchOptions();
        final int parsed = Cli.parse("allreduce-bench", options, args, out, err);
        if (parsed != Cli.PROCEED) {
            return parsed;
        }
        final AllReduceBench bench = new AllReduceBench(options, out);
        try {
            bench.start();
            bench.sweep();
            return EXIT_OK;
        } catch (final ReferenceSum.Mismatch e) {
            out.flush();
            err.println("allreduce-bench: VERIFICATION FAILED: " + e.getMessage());
            err.println("allreduce-bench: replay with --seed " + options.seed);
            return EXIT_VERIFY_FAILED;
        } catch (final RunFailed e) {
            out.flush();
            err.println("allreduce-bench: run failed: " + e.getMessage());
            if (options.verbose && e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            return EXIT_RUN_FAILED;
        } catch (final OutOfMemoryError e) {
            out.flush();
            err.println("allreduce-bench: out of memory (" + e.getMessage() + "); max heap is "
                    + (Runtime.getRuntime().maxMemory() >> 20) + " MiB: raise BENCH_HEAP or use smaller --elements");
            return EXIT_RUN_FAILED;
        } catch (final RuntimeException e) {
            out.flush();
            err.println("allreduce-bench: run failed: " + Cli.oneLine(e));
            if (options.verbose) {
                e.printStackTrace(err);
            }
            return EXIT_RUN_FAILED;
        } finally {
            bench.stop();
        }
    }

    private void start() {
        final List<Integer> ports = Collections.nCopies(options.lanes, 0);
        for (final FaultPlan plan : plans) {
            final FaultPlan switchFaults = plan.withSeed(options.seed * 1_000_003L + 17);
            aggregating.add(SoftwareSwitch.start(new SwitchOptions(HOST, ports, false, switchFaults)));
            reflector.add(SoftwareSwitch.start(new SwitchOptions(HOST, ports, true, switchFaults)));
        }
        final int threads = options.clientThreads > 0
                ? options.clientThreads
                : Math.max(2, Runtime.getRuntime().availableProcessors());
        clientGroup = Transports.newGroup(threads, "bench-worker");
        header(threads);
    }

    private void stop() {
        for (final SoftwareSwitch sw : aggregating) {
            sw.close();
        }
        for (final SoftwareSwitch sw : reflector) {
            sw.close();
        }
        if (clientGroup != null) {
            clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5_000);
        }
    }

    private void header(final int clientThreads) {
        final BenchOptions o = options;
        out.printf(Locale.ROOT, "# allreduce-bench  seed=%d%s%n", o.seed, o.seedGiven ? "" : " (default)");
        out.printf(
                Locale.ROOT,
                "# data: %s %s (%s), k=%d, pool=%d slots (%d KiB/worker in flight)%n",
                o.values,
                o.fp64 ? "double[]" : "float[]",
                o.fp64 ? "FP64_SPLIT" : "FP32_BLOCK",
                o.k,
                o.poolSize(),
                (long) o.poolSize() * 4 * o.k >> 10);
        out.printf(
                Locale.ROOT,
                "# switch lanes (dataplane threads) per switch=%d, worker event-loop threads=%d, "
                        + "transport=%s, loopback %s%n",
                o.lanes,
                clientThreads,
                Transports.nativeTransport() ? "epoll" : "nio",
                HOST);
        out.printf(
                Locale.ROOT,
                "# faults on every send: loss=%s dup=%s reorder=%s; retransmission timeout %d ms until "
                        + "round trips are measured, then from them (at least %d ms, at most %d ms)%n",
                lossList(),
                o.dup,
                o.reorder,
                o.rtoMs,
                Math.min(o.rtoMs, ClientOptions.DEFAULT_MIN_RETRANSMIT_TIMEOUT_MS),
                Math.max(o.rtoMs, ClientOptions.DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS));
        out.printf(
                Locale.ROOT,
                "# repeats=%s warm-ups=%s (median of repeats), modes=%s, verify=%s%n",
                o.repeat > 0 ? o.repeat : "auto",
                o.warmup >= 0 ? o.warmup : "auto",
                o.mode.name().toLowerCase(Locale.ROOT),
                o.verify);
        out.printf(
                Locale.ROOT,
                "# java %s, %d cores, max heap %d MiB, load average %s%n",
                System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20,
                loadAverage());
        out.println("# goodput = vector elements (or bytes of the input type) per second per worker;"
                + " ratio = switch goodput / reflector goodput;");
        out.println("# retx s/r = worker retransmissions (switch/reflector, all runs of the cell, warm-ups included);"
                + " other% = CPU used by other processes during the cell;");
        out.println(
                "# cpu ms = CPU time of this process (all threads, user + system) per allreduce, mean of the timed runs");
        if (plans.size() > 1) {
            out.printf(
                    Locale.ROOT,
                    "# the loss rates of a cell run interleaved; vs loss = switch goodput / switch goodput at "
                            + "loss %s in the same cell%n",
                    lossText(options.losses.get(0)));
        }
    }

    private String lossList() {
        final StringBuilder sb = new StringBuilder();
        for (final double l : options.losses) {
            sb.append(sb.length() == 0 ? "" : ",").append(l);
        }
        return sb.toString();
    }

    private void sweep() throws ReferenceSum.Mismatch, RunFailed {
        final long t0 = System.nanoTime();
        if (options.jitWarmup) {
            jitWarmup();
        } else {
            out.println("# JIT warm-up: skipped (--no-warmup)");
        }
        out.println();
        out.printf(
                Locale.ROOT,
                "%3s %10s %6s %4s | %9s %10s %9s %7s | %9s %10s %9s %7s | %6s | %7s | %9s %6s%n",
                "n",
                "elements",
                "loss",
                "runs",
                "switch ms",
                "Melem/s/w",
                "MB/s/w",
                "cpu ms",
                "refl ms",
                "Melem/s/w",
                "MB/s/w",
                "cpu ms",
                "ratio",
                "vs loss",
                "retx s/r",
                "other%");
        for (final int n : options.workers) {
            for (final int length : options.elements) {
                cell(n, length);
            }
        }
        out.printf(Locale.ROOT, "%n# done in %.1f s, load average %s%n", (System.nanoTime() - t0) / 1e9, loadAverage());
    }

    /** Largest vector of a warm-up cell. */
    static final int WARMUP_MAX_ELEMENTS = 1 << 18;
    /** How long the warm-up runs, at least one round. */
    private static final long WARMUP_NANOS = 3_000_000_000L;

    /**
     * Untimed allreduces on both switches until the JIT compiler has settled (about 3 s: tens of thousands
     * of packets per worker). Without it the first cells measure the compiler: C2 needs ~10^4 calls of a
     * method. It runs the requested cells, with their k, pool, values and fault settings, scaled down:
     * vectors cut to at most {@link #WARMUP_MAX_ELEMENTS}, round after round until the time is up.
     */
    private void jitWarmup() throws RunFailed {
        final long t0 = System.nanoTime();
        final List<Cell> cells = new ArrayList<>();
        int rounds = 0;
        try {
            for (final int n : options.workers) {
                for (final int length : warmupLengths()) {
                    final BenchVectors v = BenchVectors.generate(
                            options.values, n, length, options.fp64, options.seed + 31L * n + length);
                    for (int p = 0; p < plans.size(); p++) {
                        cells.add(new Cell(n, v, p));
                    }
                }
            }
            while (rounds == 0 || System.nanoTime() - t0 < WARMUP_NANOS) {
                for (final Cell c : cells) {
                    for (final Target t : targets()) {
                        c.run(t);
                    }
                }
                rounds++;
            }
        } catch (final RunFailed e) {
            throw new RunFailed("JIT warm-up (the requested cells, scaled down): " + e.getMessage(), e.getCause());
        } finally {
            for (final Cell c : cells) {
                c.close();
            }
        }
        out.printf(
                Locale.ROOT,
                "# JIT warm-up: %d cells (vectors cut to at most %d elements), %d rounds, %.1f s%n",
                cells.size(),
                WARMUP_MAX_ELEMENTS,
                rounds,
                (System.nanoTime() - t0) / 1e9);
    }

    /** The requested vector lengths, each cut to at most {@link #WARMUP_MAX_ELEMENTS}, without repeats. */
    private List<Integer> warmupLengths() {
        final List<Integer> out = new ArrayList<>();
        for (final int length : options.elements) {
            final int l = Math.min(length, WARMUP_MAX_ELEMENTS);
            if (!out.contains(l)) {
                out.add(l);
            }
        }
        return out;
    }

    private List<Target> targets() {
        switch (options.mode) {
            case SWITCH:
                return List.of(Target.SWITCH);
            case REFLECTOR:
                return List.of(Target.REFLECTOR);
            default:
                return List.of(Target.SWITCH, Target.REFLECTOR);
        }
    }

    private int repeats(final int length) {
        if (options.repeat > 0) {
            return options.repeat;
        }
        if (length >= 1 << 20) {
            return 9;
        }
        if (length >= 1 << 18) {
            return 15;
        }
        return length >= 1 << 16 ? 31 : 51;
    }

    private int warmups(final int repeats) {
        return options.warmup >= 0 ? options.warmup : Math.max(2, repeats / 4);
    }

    private void cell(final int n, final int length) throws ReferenceSum.Mismatch, RunFailed {
        final long seed = options.seed + 1_000_003L * n + length;
        final BenchVectors v = BenchVectors.generate(options.values, n, length, options.fp64, seed);
        ReferenceSum reference = null;
        double worst = Double.NaN;
        if (options.verify) {
            reference = ReferenceSum.of(v, options.k);
            try {
                worst = reference.checkBound(v);
            } catch (final ReferenceSum.Mismatch e) {
                throw new ReferenceSum.Mismatch("n=" + n + " elements=" + length + ": " + e.getMessage());
            }
        }
        final List<Target> targets = targets();
        final int repeats = repeats(length);
        final int warmups = warmups(repeats);
        final int settings = plans.size();
        final long[][][] times = new long[settings][Target.values().length][repeats];
        final long[][] retx = new long[settings][Target.values().length];
        final CpuBreakdown[][][] cpus = new CpuBreakdown[settings][Target.values().length][repeats];
        final boolean bigHeap = (long) n * length * v.elementBytes() >= 64L << 20;
        final CpuMonitor cpu = new CpuMonitor();
        final List<Cell> cells = new ArrayList<>();
        try {
            for (int p = 0; p < settings; p++) {
                cells.add(new Cell(n, v, p));
            }
            cpu.start();
            for (int i = -warmups; i < repeats; i++) {
                // Alternate which switch (and which loss rate) goes first, so none always runs on a
                // freshly idle machine.
                final List<Target> order = new ArrayList<>(targets);
                if ((i & 1) != 0) {
                    Collections.reverse(order);
                }
                for (int step = 0; step < settings; step++) {
                    final int p = Math.floorMod(i + step, settings);
                    final Cell cell = cells.get(p);
                    for (final Target t : order) {
                        if (bigHeap) {
                            System.gc(); // untimed: keeps the previous run's garbage out of this run's time
                        }
                        final long before = cell.retransmissions();
                        final Run run = cell.run(t);
                        retx[p][t.ordinal()] += cell.retransmissions() - before;
                        if (i >= 0) {
                            times[p][t.ordinal()][i] = run.nanos;
                            cpus[p][t.ordinal()][i] = run.cpu;
                        }
                        if (reference != null && t == Target.SWITCH) {
                            verify(reference, run, n, length);
                        }
                    }
                }
            }
        } finally {
            for (final Cell c : cells) {
                c.close();
            }
        }
        final double other = cpu.otherPercent();
        double baseline = Double.NaN;
        for (int p = 0; p < settings; p++) {
            final double seconds =
                    row(n, length, p, v.elementBytes(), repeats, times[p], cpus[p], retx[p], other, worst, baseline);
            if (p == 0) {
                baseline = seconds;
            }
        }
    }

    private static void verify(final ReferenceSum reference, final Run run, final int n, final int length)
            throws ReferenceSum.Mismatch {
        try {
            for (int r = 0; r < n; r++) {
                if (run.results[r] instanceof float[]) {
                    reference.checkResult(r, (float[]) run.results[r]);
                } else {
                    reference.checkResult(r, (double[]) run.results[r]);
                }
            }
        } catch (final ReferenceSum.Mismatch e) {
            throw new ReferenceSum.Mismatch("n=" + n + " elements=" + length + ": " + e.getMessage());
        }
    }

    /**
     * Prints the row of fault setting {@code plan} of a cell; returns the switch's median seconds (NaN when
     * the switch was not measured). {@code baseline} is that of the cell's first loss rate, or NaN.
     */
    private double row(
            final int n,
            final int length,
            final int plan,
            final int elementBytes,
            final int repeats,
            final long[][] times,
            final CpuBreakdown[][] cpus,
            final long[] retx,
            final double otherCpu,
            final double worst,
            final double baseline) {
        final StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(Locale.ROOT, "%3d %10d %6s %4d", n, length, lossText(options.losses.get(plan)), repeats));
        final double[] median = new double[2];
        for (final Target t : Target.values()) {
            final boolean measured = targets().contains(t);
            if (!measured) {
                sb.append(String.format(Locale.ROOT, " | %9s %10s %9s %7s", "-", "-", "-", "-"));
                continue;
            }
            final double seconds = median(times[t.ordinal()]) / 1e9;
            median[t.ordinal()] = seconds;
            sb.append(String.format(
                    Locale.ROOT,
                    " | %9.3f %10.2f %9.1f %7.1f",
                    seconds * 1e3,
                    length / seconds / 1e6,
                    (double) length * elementBytes / seconds / 1e6,
                    meanCpu(cpus[t.ordinal()], null) / 1e6));
        }
        if (median[0] > 0 && median[1] > 0) {
            sb.append(String.format(Locale.ROOT, " | %6.3f", median[1] / median[0]));
        } else {
            sb.append(String.format(Locale.ROOT, " | %6s", "-"));
        }
        if (median[0] > 0 && baseline > 0) {
            sb.append(String.format(Locale.ROOT, " | %7.3f", baseline / median[0]));
        } else if (median[0] > 0 && plans.size() > 1) {
            sb.append(String.format(Locale.ROOT, " | %7s", "1"));
        } else {
            sb.append(String.format(Locale.ROOT, " | %7s", "-"));
        }
        sb.append(String.format(
                Locale.ROOT,
                " | %9s %6s",
                retx[0] + "/" + retx[1],
                otherCpu < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f", otherCpu)));
        if (!Double.isNaN(worst)) {
            sb.append(String.format(Locale.ROOT, "  verified: bit-exact, worst error %.4f of bound", worst));
        }
        out.println(sb);
        if (options.cpuDetail) {
            for (final Target t : targets()) {
                final StringBuilder d = new StringBuilder(String.format(Locale.ROOT, "#   %-9s cpu ms/run:", t.label));
                for (final CpuBreakdown.Group g : CpuBreakdown.Group.values()) {
                    d.append(String.format(
                            Locale.ROOT,
                            " %s %.1f",
                            g.name().toLowerCase(Locale.ROOT).replace('_', '-'),
                            meanCpu(cpus[t.ordinal()], g) / 1e6));
                }
                out.println(d);
            }
        }
        out.flush();
        return median[0] > 0 ? median[0] : Double.NaN;
    }

    /** A loss probability as a percentage, e.g. 1%, 0.5%. */
    private static String lossText(final double loss) {
        final String pct = BigDecimal.valueOf(loss * 100).stripTrailingZeros().toPlainString();
        return pct + "%";
    }

    /**
     * Mean over runs of the CPU time of group {@code g} (the process when null). A mean, not a median:
     * the process clock ticks in 10 ms steps, and only the mean of many runs resolves short ones.
     */
    private static double meanCpu(final CpuBreakdown[] runs, final CpuBreakdown.Group g) {
        double sum = 0;
        for (final CpuBreakdown run : runs) {
            sum += g == null ? run.total() : run.nanos(g);
        }
        return sum / runs.length;
    }

    private static double median(final long[] values) {
        final long[] s = values.clone();
        Arrays.sort(s);
        final int m = s.length / 2;
        return (s.length & 1) == 1 ? s[m] : (s[m - 1] + s[m]) / 2.0;
    }

    private static String loadAverage() {
        try {
            final String[] f = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII)
                    .trim()
                    .split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (final IOException | RuntimeException e) {
            return "n/a";
        }
    }

    /** One timed allreduce: wall time and every worker's result vector. */
    record Run(long nanos, Object[] results, CpuBreakdown cpu) {}

    /** The benchmark could not complete a run (a worker failed or timed out). */
    static final class RunFailed extends Exception {
        private static final long serialVersionUID = 1L;

        RunFailed(final String message, final Throwable cause) {
            super(message, cause);
        }
    }

    /** n worker sockets, joined to one job on each switch, and one caller thread per worker. */
    private final class Cell implements AutoCloseable {
        private final int n;
        private final BenchVectors vectors;
        private final SoftwareSwitch aggregating;
        private final SoftwareSwitch reflector;
        /** Names the cell and fault setting in a failure. */
        private final String label;

        private final List<SwitchMLClient> clients = new ArrayList<>();
        private final JobSession[][] sessions = new JobSession[Target.values().length][];
        private final ExecutorService threads;
        private final List<Integer> jobIds = new ArrayList<>();

        /** The cell's workers with fault setting {@code plan} (an index into the --loss list). */
        Cell(final int n, final BenchVectors vectors, final int plan) {
            this.n = n;
            this.vectors = vectors;
            this.aggregating = AllReduceBench.this.aggregating.get(plan);
            this.reflector = AllReduceBench.this.reflector.get(plan);
            final FaultPlan faults = plans.get(plan);
            this.label = "n=" + n + ", elements=" + vectors.length + ", loss " + lossText(faults.loss());
            this.threads = Executors.newFixedThreadPool(n, r -> {
                final Thread t = new Thread(r, "bench-rank");
                t.setDaemon(true);
                return t;
            });
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            final ClientOptions base = ClientOptions.defaults()
                    .withBindHost(HOST)
                    .withFp64(options.fp64)
                    .withRetransmitTimeoutMs(
                            options.rtoMs, Math.max(options.rtoMs, ClientOptions.DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS))
                    .withResultTimeoutMs(options.resultTimeoutMs);
            for (int r = 0; r < n; r++) {
                final SwitchMLClient c = SwitchMLClient.open(
                        base.withFaults(faults.withSeed(options.seed * 7919L + 104_729L * r + n)), clientGroup);
                clients.add(c);
                endpoints.add(c.localAddress());
            }
            for (final Target t : Target.values()) {
                // Separate job ids, so a late result of one switch's job can never match the other's.
                final JobSpec spec = new JobSpec(nextJobId++, 0, options.k, options.poolSize(), endpoints);
                jobIds.add(spec.jobId());
                final SoftwareSwitch sw = t == Target.SWITCH ? aggregating : reflector;
                sw.registerJob(spec);
                sessions[t.ordinal()] = new JobSession[n];
                for (int r = 0; r < n; r++) {
                    sessions[t.ordinal()][r] = clients.get(r).join(spec, r, sw.address());
                }
            }
        }

        /** One allreduce on every worker, released together; timed until the last worker has its result. */
        Run run(final Target target) throws RunFailed {
            final JobSession[] s = sessions[target.ordinal()];
            final CountDownLatch ready = new CountDownLatch(n);
            final CountDownLatch go = new CountDownLatch(1);
            final long[] end = new long[n];
            final Object[] results = new Object[n];
            final List<Future<?>> futures = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                final int rank = r;
                futures.add(threads.submit(() -> {
                    ready.countDown();
                    go.await();
                    results[rank] = vectors.fp64
                            ? s[rank].allReduce(vectors.doubles[rank])
                            : s[rank].allReduce(vectors.floats[rank]);
                    end[rank] = System.nanoTime();
                    return null;
                }));
            }
            final long start;
            final CpuBreakdown cpuBefore;
            try {
                ready.await();
                cpuBefore = CpuBreakdown.now();
                start = System.nanoTime();
                go.countDown();
                final long boundMs = options.resultTimeoutMs + 30_000;
                for (final Future<?> f : futures) {
                    f.get(boundMs, TimeUnit.MILLISECONDS);
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RunFailed("interrupted", e);
            } catch (final ExecutionException e) {
                throw new RunFailed(
                        target.label + ", " + label + ": " + e.getCause().getMessage() + "\n" + diagnostics(target),
                        e.getCause());
            } catch (final TimeoutException e) {
                throw new RunFailed(
                        target.label + ", " + label + ": workers did not finish\n" + diagnostics(target), e);
            }
            long last = start;
            for (final long e : end) {
                last = Math.max(last, e);
            }
            return new Run(last - start, results, CpuBreakdown.now().minus(cpuBefore));
        }

        /** The switch's counters for this cell's job and every worker's socket counters, for a failure report. */
        String diagnostics(final Target target) {
            final StringBuilder sb = new StringBuilder();
            final SoftwareSwitch sw = target == Target.SWITCH ? aggregating : reflector;
            try {
                sb.append("  ")
                        .append(target.label)
                        .append(" counters of job ")
                        .append(jobIds.get(target.ordinal()))
                        .append(": ")
                        .append(sw.counters(jobIds.get(target.ordinal())))
                        .append('\n');
                sb.append("  ")
                        .append(target.label)
                        .append(" switch counters: ")
                        .append(sw.traffic());
                for (int r = 0; r < n; r++) {
                    sb.append("\n  rank ")
                            .append(r)
                            .append(" (")
                            .append(clients.get(r).localAddress())
                            .append("): ")
                            .append(clients.get(r).stats());
                }
            } catch (final RuntimeException e) {
                sb.append("  (counters unavailable: ").append(e.getMessage()).append(')');
            }
            return sb.toString();
        }

        /** Retransmissions of all workers so far (both jobs). */
        long retransmissions() {
            long sum = 0;
            for (final SwitchMLClient c : clients) {
                final ClientStats st = c.stats();
                sum += st.retransmissions();
            }
            return sum;
        }

        @Override
        public void close() {
            threads.shutdownNow();
            for (final SwitchMLClient c : clients) {
                c.close();
            }
            aggregating.removeJob(jobIds.get(0));
            reflector.removeJob(jobIds.get(1));
        }
    }
}

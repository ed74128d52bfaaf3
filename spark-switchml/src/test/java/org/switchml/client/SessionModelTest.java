package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchMLException;
import org.switchml.testing.ExactSum;
import org.switchml.testing.Seeds;
import org.switchml.testing.Vectors;
import org.switchml.transport.FaultPlan;

/**
 * A stateful, model-based randomized test of sessions: random sequences of register, join (and re-join),
 * allreduce, close, worker crash in the middle of a call, switch restart, and a call followed at once by a new
 * registration and a call whose packets are numbered alike (where datagrams are held back 20 ms or more, so
 * late results of the first registration arrive during the second), for one job of 2 to 8 workers, under
 * random loss, duplication and reordering (datagrams held back up to 2, 20 or 50 ms) on every endpoint.
 *
 * <p>The model decides, for every call, one of three verdicts, and the test holds the call to it:
 * <ul>
 *   <li><b>must complete</b> (liveness): the call returns, and with the exact sum of that call's inputs, bit
 *   for bit against an independent oracle ({@link ExactSum}, integer sums for int vectors). Random loss,
 *   duplication and reordering never excuse a failure: retransmission must recover them within the result
 *   timeout.</li>
 *   <li><b>may complete</b>: the exact sum, or a clear error.</li>
 *   <li><b>cannot complete</b>: a clear error.</li>
 * </ul>
 * A clear error is a {@link SwitchMLException} or {@link IllegalStateException} whose message names the job,
 * the rank and the worker's host and port; never another sum.
 *
 * <p>The model: a registration (job id, generation, secret) is current until the next one or a switch
 * restart; a worker's session is usable while it belongs to the current registration, its socket is open
 * and no call of it has failed; a second join of the same registration by the same socket is refused.
 * Calls are matched the way the protocol matches them: the c-th call of every worker's session of one
 * registration is one logical call (same length and type on every worker, as the API requires), whose
 * result is the sum of those n inputs.
 * <ul>
 *   <li>A call cannot complete when its session is not usable, or when some worker has neither made nor is
 *   making its c-th call of the registration.</li>
 *   <li>A call must complete when its session is usable and every worker of the job is making its c-th call
 *   of the same registration now, with a usable session, and no socket closes during it: then every earlier
 *   call of every session succeeded, the switch is alive and holds the registration, and nothing is lost for
 *   good.</li>
 *   <li>Otherwise it may complete: a worker whose c-th call failed may still have contributed all of it, and
 *   a socket closed during the call may have sent all of it first.</li>
 * </ul>
 *
 * <p>A run is {@value #SEQUENCES} sequences, each a test of its own, drawn from one seed that changes from
 * run to run (printed at the start; {@code -Dswitchml.test.seed} replays a run, and adding
 * {@code -Dswitchml.test.sequence=i} replays only its sequence i). A failure names the run's seed and prints
 * the whole sequence with the step that failed. A replay repeats the steps, their inputs and the seeds of
 * the fault plans, not the timing of threads and datagrams: a failure that hinges on an interleaving may
 * take a few replays to show again. The run ends within {@value #TIMEOUT_SECONDS} s: each
 * sequence gets what is left of that bound and is interrupted when it runs out. After the run, the model
 * must have required some call to complete and doomed some call, so both verdicts were put to the test; the
 * Netty leak check is {@code NoLeaksExtension}'s, after the class, as for every test class.
 */
class SessionModelTest {
    private static final int JOB = 77;
    private static final int K = 16;
    private static final int POOL = 4;
    /** A call's bound without progress: an order of magnitude above a round trip at the largest hold-back. */
    private static final long RESULT_TIMEOUT_MS = 600;
    /** Sequences per run. */
    static final int SEQUENCES = 50;
    /** The whole run (every sequence) ends within this. */
    static final long TIMEOUT_SECONDS = 300;

    private static final int MAX_WORKERS = 8;

    private static final AtomicLong EXACT = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final AtomicLong REQUIRED = new AtomicLong();
    private static final AtomicLong DOOMED = new AtomicLong();
    private static final AtomicLong FINISHED = new AtomicLong();
    /** When the run's bound expires (System.nanoTime()). */
    private static long deadline;

    /** One step of a sequence. */
    sealed interface Op
            permits Register, Join, JoinAll, AllReduce, Close, CrashMidCall, RestartSwitch, CallThenReRegister {}

    /** A new registration of the job (a new secret; the same or the next generation). */
    record Register(boolean nextGeneration) implements Op {}

    /** One worker joins the current registration (a second time: refused). */
    record Join(int rank) implements Op {}

    /** Every worker joins the current registration. */
    record JoinAll() implements Op {}

    /** Every worker with a session calls allreduce on its own input (ints, or doubles in FP32_BLOCK). */
    record AllReduce(int length, boolean ints, long seed) implements Op {}

    /** A worker's socket is closed between calls. */
    record Close(int rank) implements Op {}

    /** An allreduce during which one worker's socket is closed after {@code delayMicros}. */
    record CrashMidCall(int rank, int length, boolean ints, long seed, int delayMicros) implements Op {}

    /** The switch process dies and a new one starts on the same ports, knowing no job. */
    record RestartSwitch() implements Op {}

    /**
     * A new registration, every worker joins, and one call; then at once another registration (the same or the
     * next generation), every worker joins, and a call of the same length and type with other inputs, which
     * worker {@code lateRank} starts a longest hold-back after the others. Both calls are the first of their
     * registration, so they number their packets alike (same sequence numbers, slots and sets). Results of the
     * first call that were held back, while the worker had them already in answer to a retransmission, still
     * arrive during the second, while the others' first window waits for the late worker: only the secret, or
     * the generation, tells them apart from the results the window waits for.
     */
    record CallThenReRegister(int length, boolean ints, long seed, long nextSeed, boolean nextGeneration, int lateRank)
            implements Op {}

    /** What the model says of one call. */
    enum Verdict {
        MUST_COMPLETE,
        MAY_COMPLETE,
        CANNOT_COMPLETE
    }

    /**
     * One generated case: a job of {@code n} workers under {@code faults} on every endpoint, started (registered,
     * every worker joined), then {@code ops}, then a check that a fresh registration still sums exactly.
     */
    record Sequence(long runSeed, int index, int n, FaultPlan faults, List<Op> ops) {
        /**
         * Relative odds of each step: Register, Join, JoinAll, AllReduce, Close, CrashMidCall, RestartSwitch,
         * CallThenReRegister; the last is {@link #LATE_WEIGHT} where results come late, else 0.
         */
        private static final int[] WEIGHTS = {3, 2, 3, 6, 1, 1, 1, 0};
        /**
         * Odds of CallThenReRegister under a plan that holds datagrams back for 20 ms or more: then results of the
         * first call arrive during the second (a result held back for longer than a retransmission timeout comes
         * again in answer to the retransmission, and the held-back copy arrives after the call has ended).
         * Elsewhere the step would cost time and show nothing that Register, JoinAll and AllReduce do not.
         */
        private static final int LATE_WEIGHT = 4;

        /** Sequence {@code index} (1 to {@value #SEQUENCES}) of the run with seed {@code runSeed}, always the same. */
        static Sequence generate(final long runSeed, final int index) {
            // Each sequence draws from its own stream: the index-th split of the run's.
            final SplittableRandom run = new SplittableRandom(runSeed);
            SplittableRandom own = run;
            for (int i = 0; i < index; i++) {
                own = run.split();
            }
            final int n = own.nextInt(2, MAX_WORKERS + 1);
            final FaultPlan faults = new FaultPlan(
                    pick(own, 0.0, 0.02, 0.1),
                    pick(own, 0.0, 0.05),
                    pick(own, 0.0, 0.05, 0.2),
                    0,
                    own.nextLong(),
                    pick(own, 2_000L, 20_000L, 50_000L));
            final int steps = own.nextInt(3, 14);
            final List<Op> ops = new ArrayList<>(steps);
            final int[] weights = WEIGHTS.clone();
            if (faults.reorder() > 0 && faults.maxReorderDelayMicros() >= 20_000) {
                weights[weights.length - 1] = LATE_WEIGHT;
            }
            for (int s = 0; s < steps; s++) {
                ops.add(op(own, weights));
            }
            return new Sequence(runSeed, index, n, faults, List.copyOf(ops));
        }

        private static Op op(final SplittableRandom rnd, final int[] weights) {
            int w = rnd.nextInt(Arrays.stream(weights).sum());
            int kind = 0;
            while (w >= weights[kind]) {
                w -= weights[kind++];
            }
            return switch (kind) {
                case 0 -> new Register(rnd.nextBoolean());
                case 1 -> new Join(rnd.nextInt(MAX_WORKERS));
                case 2 -> new JoinAll();
                case 3 -> new AllReduce(length(rnd), rnd.nextBoolean(), rnd.nextLong());
                case 4 -> new Close(rnd.nextInt(MAX_WORKERS));
                case 5 ->
                    new CrashMidCall(
                            rnd.nextInt(MAX_WORKERS),
                            length(rnd),
                            rnd.nextBoolean(),
                            rnd.nextLong(),
                            rnd.nextInt(0, 3_001));
                case 6 -> new RestartSwitch();
                default ->
                    new CallThenReRegister(
                            rnd.nextInt(1, K * POOL + 1),
                            rnd.nextBoolean(),
                            rnd.nextLong(),
                            rnd.nextLong(),
                            rnd.nextBoolean(),
                            rnd.nextInt(MAX_WORKERS));
            };
        }

        /** 1 to 300 elements; a third each within one packet, within the pool's window, and reusing slots. */
        private static int length(final SplittableRandom rnd) {
            return switch (rnd.nextInt(3)) {
                case 0 -> rnd.nextInt(1, K + 1);
                case 1 -> rnd.nextInt(K + 1, K * POOL + 1);
                default -> rnd.nextInt(K * POOL + 1, 301);
            };
        }

        @SafeVarargs
        private static <T> T pick(final SplittableRandom rnd, final T... choices) {
            return choices[rnd.nextInt(choices.length)];
        }

        /** The whole sequence, the step reached marked (-1: the start, ops.size(): the final check). */
        String describe(final int reached) {
            final StringBuilder b = new StringBuilder("sequence ")
                    .append(index)
                    .append(" of the run with seed ")
                    .append(runSeed)
                    .append(" (replay it with -Dswitchml.test.seed=")
                    .append(runSeed)
                    .append(" -Dswitchml.test.sequence=")
                    .append(index)
                    .append("): ")
                    .append(n)
                    .append(" workers, ")
                    .append(faults)
                    .append('\n');
            b.append(reached == -1 ? " >> " : "    ").append("start: Register[nextGeneration=false], JoinAll[]\n");
            for (int s = 0; s < ops.size(); s++) {
                b.append(reached == s ? " >> " : "    ")
                        .append(s + 1)
                        .append(". ")
                        .append(ops.get(s))
                        .append('\n');
            }
            b.append(reached == ops.size() ? " >> " : "    ").append("then: a new registration sums exactly");
            return b.toString();
        }
    }

    /** The run's sequences (or the one -Dswitchml.test.sequence names), from the printed per-run seed. */
    static Stream<Named<Sequence>> sequences() {
        final long runSeed = Seeds.perRun("session model");
        final String only = System.getProperty("switchml.test.sequence");
        final List<Named<Sequence>> out = new ArrayList<>();
        for (int i = 1; i <= SEQUENCES; i++) {
            if (only == null || Integer.parseInt(only) == i) {
                final Sequence s = Sequence.generate(runSeed, i);
                out.add(Named.of(
                        "sequence " + i + ": " + s.n() + " workers, " + s.ops().size() + " steps", s));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(
                    "-Dswitchml.test.sequence=" + only + ": a run has sequences 1 to " + SEQUENCES);
        }
        return out.stream();
    }

    @BeforeAll
    static void startTheClock() {
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
    }

    @AfterAll
    static void summary() {
        System.out.println("[session model] " + FINISHED.get() + " sequences passed; calls exact " + EXACT.get()
                + " (of which the model required " + REQUIRED.get() + "), clear errors " + ERRORS.get()
                + " (of which the model required " + DOOMED.get() + ")");
        if (System.getProperty("switchml.test.sequence") != null) {
            System.out.println("[session model] one sequence replayed: both verdicts are required only of a whole run");
            return;
        }
        assertTrue(REQUIRED.get() > 0, "the model required no call to complete: liveness was not checked");
        assertTrue(DOOMED.get() > 0, "the model doomed no call: the error path was not checked");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sequences")
    void everyCallIsTheExactSumOfItsInputsOrAClearErrorAsTheModelSays(final Sequence s) {
        final long left = deadline - System.nanoTime();
        final AtomicInteger reached = new AtomicInteger(-1);
        final String bound = "the run of " + SEQUENCES + " sequences ran past its bound of " + TIMEOUT_SECONDS + " s";
        if (left <= 0) {
            fail(bound + "; sequence " + s.index() + " did not start");
        }
        // On expiry the sequence's thread is interrupted (every wait in it is), and the run fails here.
        assertTimeoutPreemptively(
                Duration.ofNanos(left), () -> run(s, reached), () -> bound + ", in " + s.describe(reached.get()));
        FINISHED.incrementAndGet();
    }

    /** Runs {@code s}, keeping in {@code reached} the step it is in, and failing with the whole sequence. */
    private static void run(final Sequence s, final AtomicInteger reached) {
        try (World w = new World(s.n(), s.faults())) {
            // Start from a running job: registered, every worker joined.
            w.apply(new Register(false));
            w.apply(new JoinAll());
            for (int step = 0; step < s.ops().size(); step++) {
                reached.set(step);
                w.apply(s.ops().get(step));
            }
            reached.set(s.ops().size());
            w.stillWorks();
        } catch (final Throwable t) {
            final String what = t instanceof AssertionError && t.getMessage() != null ? t.getMessage() : t.toString();
            throw new AssertionError(what + "\nin " + s.describe(reached.get()), t);
        }
    }

    /** Logical call c of a registration: its length, type, every worker's input and the oracle's sum. */
    private static final class Shape {
        final int length;
        final boolean ints;
        private final long seed;
        private final int n;
        private Object sum;

        Shape(final int length, final boolean ints, final long seed, final int n) {
            this.length = length;
            this.ints = ints;
            this.seed = seed;
            this.n = n;
        }

        int[] intInput(final int rank) {
            return new SplittableRandom(seed + rank).ints(length).toArray();
        }

        double[] doubleInput(final int rank) {
            return Vectors.mixed(new SplittableRandom(seed + rank), length);
        }

        /** The exact sum: int32 addition (mod 2^32) for ints, the FP32_BLOCK rule in exact arithmetic for doubles. */
        Object sum() {
            if (sum == null) {
                if (ints) {
                    final int[] total = new int[length];
                    for (int r = 0; r < n; r++) {
                        final int[] v = intInput(r);
                        for (int i = 0; i < length; i++) {
                            total[i] += v[i];
                        }
                    }
                    sum = total;
                } else {
                    final double[][] in = new double[n][];
                    for (int r = 0; r < n; r++) {
                        in[r] = doubleInput(r);
                    }
                    sum = ExactSum.fp32(in, K);
                }
            }
            return sum;
        }

        String show(final Object v) {
            return ints ? Arrays.toString((int[]) v) : Arrays.toString((double[]) v);
        }
    }

    /** A registration and, per worker, how many calls its session made there; the shape of each call. */
    private static final class Registration {
        final JobSpec spec;
        final int[] calls;
        private final List<Shape> shapes = new ArrayList<>();

        Registration(final JobSpec spec, final int n) {
            this.spec = spec;
            this.calls = new int[n];
        }

        Shape shape(final int c, final int length, final boolean ints, final long seed) {
            while (shapes.size() <= c) {
                shapes.add(new Shape(length, ints, seed * 1_000_003L + shapes.size(), calls.length));
            }
            return shapes.get(c);
        }
    }

    /** The system under test (a switch and n worker sockets) and its model. */
    private static final class World implements AutoCloseable {
        private final int n;
        private final FaultPlan faults;
        private final ExecutorService pool;
        private final ScheduledExecutorService crasher = Executors.newSingleThreadScheduledExecutor();
        private SoftwareSwitch sw;
        private final SwitchMLClient[] clients;
        private final boolean[] closed;
        /** Registrations (generation, secret) each socket joined: a second join of one is refused. */
        private final List<Set<List<Integer>>> joined = new ArrayList<>();

        private final JobSession[] sessions;
        /** The registration each session belongs to. */
        private final Registration[] sessionOf;

        private final boolean[] broken;
        private JobSpec current;
        private Registration currentRegistration;
        private int generation;
        private int registrations;

        World(final int n, final FaultPlan faults) {
            this.n = n;
            this.faults = faults;
            this.pool = Executors.newFixedThreadPool(n);
            this.sw = SoftwareSwitch.start(SwitchOptions.loopback(2).withFaults(faults));
            this.clients = new SwitchMLClient[n];
            this.closed = new boolean[n];
            this.sessions = new JobSession[n];
            this.sessionOf = new Registration[n];
            this.broken = new boolean[n];
            for (int r = 0; r < n; r++) {
                joined.add(new HashSet<>());
                clients[r] = open(r);
            }
        }

        private SwitchMLClient open(final int r) {
            return SwitchMLClient.open(ClientOptions.defaults()
                    .withResultTimeoutMs(RESULT_TIMEOUT_MS)
                    .withRetransmitTimeoutMs(5, 40)
                    .withFaults(faults.withSeed(faults.seed() * 31 + r + 17L * registrations)));
        }

        void apply(final Op op) throws Exception {
            if (op instanceof Register r) {
                register(r.nextGeneration());
            } else if (op instanceof Join j) {
                join(j.rank() % n);
            } else if (op instanceof JoinAll) {
                for (int r = 0; r < n; r++) {
                    join(r);
                }
            } else if (op instanceof AllReduce a) {
                allReduce(a.length(), a.ints(), a.seed(), -1, 0, -1);
            } else if (op instanceof Close c) {
                close(c.rank() % n);
            } else if (op instanceof CrashMidCall c) {
                allReduce(c.length(), c.ints(), c.seed(), c.rank() % n, c.delayMicros(), -1);
            } else if (op instanceof RestartSwitch) {
                restart();
            } else if (op instanceof CallThenReRegister c) {
                register(false);
                apply(new JoinAll());
                allReduce(c.length(), c.ints(), c.seed(), -1, 0, -1);
                register(c.nextGeneration());
                apply(new JoinAll());
                allReduce(c.length(), c.ints(), c.nextSeed(), -1, 0, c.lateRank() % n);
            } else {
                throw new IllegalArgumentException(String.valueOf(op));
            }
        }

        private void register(final boolean nextGeneration) {
            for (int r = 0; r < n; r++) {
                if (closed[r]) {
                    // The crashed worker comes back with a new socket (a new endpoint, a fresh client).
                    clients[r] = open(r);
                    closed[r] = false;
                    joined.get(r).clear();
                    sessions[r] = null;
                    sessionOf[r] = null;
                }
            }
            if (nextGeneration) {
                generation = (generation + 1) & 0xFFFF;
            }
            registrations++;
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            for (final SwitchMLClient c : clients) {
                endpoints.add(c.localAddress());
            }
            // Distinct, deterministic secrets (a controller draws them at random; the value does not matter here).
            current = new JobSpec(JOB, generation, 0x5EC0_0000 ^ (registrations * 0x9E37_79B9), K, POOL, endpoints);
            currentRegistration = new Registration(current, n);
            assertTrue(sw.registerJob(current));
        }

        private void join(final int r) {
            if (current == null || closed[r]) {
                return;
            }
            final List<Integer> id = List.of(current.generation(), current.secret());
            if (joined.get(r).contains(id)) {
                final IllegalStateException e = assertThrows(
                        IllegalStateException.class,
                        () -> clients[r].join(current, r, sw.address()),
                        "a second join of one registration");
                assertTrue(e.getMessage().contains("already joined"), e.getMessage());
                return;
            }
            sessions[r] = clients[r].join(current, r, sw.address());
            sessionOf[r] = currentRegistration;
            joined.get(r).add(id);
            broken[r] = false;
        }

        private boolean usable(final int r) {
            return sessions[r] != null
                    && !broken[r]
                    && !closed[r]
                    && current != null
                    && sessions[r].spec().equals(current);
        }

        private void close(final int r) {
            clients[r].close();
            closed[r] = true;
        }

        private void restart() {
            final List<Integer> ports = new ArrayList<>(sw.address().lanePorts());
            sw.close();
            SoftwareSwitch next;
            try {
                next = SoftwareSwitch.start(new SwitchOptions("127.0.0.1", ports, false, faults));
            } catch (final SwitchMLException e) {
                next = SoftwareSwitch.start(SwitchOptions.loopback(2).withFaults(faults)); // a port was taken meanwhile
            }
            sw = next;
            current = null;
            currentRegistration = null;
        }

        /**
         * One call on every worker that has a session; with {@code crash >= 0}, that worker's socket closes
         * {@code delayMicros} into the call; with {@code late >= 0}, that worker starts its call the plan's longest
         * hold-back after the others. The action's shape and seed define logical call c of a registration the
         * first time some worker makes its c-th call there.
         */
        private void allReduce(
                final int length,
                final boolean ints,
                final long seed,
                final int crash,
                final int delayMicros,
                final int late)
                throws Exception {
            final int[] index = new int[n];
            final Shape[] shape = new Shape[n];
            final boolean[] calling = new boolean[n];
            for (int r = 0; r < n; r++) {
                if (sessions[r] != null) {
                    calling[r] = true;
                    index[r] = sessionOf[r].calls[r];
                    shape[r] = sessionOf[r].shape(index[r], length, ints, seed);
                }
            }
            // Decided on the state at the start of the call (a crash below may close a socket during it).
            final Verdict[] verdict = new Verdict[n];
            for (int r = 0; r < n; r++) {
                verdict[r] = calling[r] ? verdict(r, index[r], calling, index, crash) : null;
            }
            final List<Future<Object>> calls = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                if (!calling[r]) {
                    calls.add(null);
                    continue;
                }
                final JobSession s = sessions[r];
                final Shape sh = shape[r];
                final int rank = r;
                final Supplier<Object> call =
                        () -> sh.ints ? s.allReduce(sh.intInput(rank)) : s.allReduce(sh.doubleInput(rank));
                calls.add(CompletableFuture.supplyAsync(
                        call,
                        r != late
                                ? pool
                                : CompletableFuture.delayedExecutor(
                                        faults.maxReorderDelayMicros(), TimeUnit.MICROSECONDS, pool)));
            }
            if (crash >= 0) {
                final SwitchMLClient victim = clients[crash];
                crasher.schedule(victim::close, delayMicros, TimeUnit.MICROSECONDS)
                        .get(10, TimeUnit.SECONDS);
                closed[crash] = true;
            }
            for (int r = 0; r < n; r++) {
                if (!calling[r]) {
                    continue;
                }
                final String call = "rank " + r + " call " + index[r] + " (" + verdict[r] + ")";
                final Object got;
                try {
                    got = calls.get(r).get(RESULT_TIMEOUT_MS + 30_000, TimeUnit.MILLISECONDS);
                } catch (final ExecutionException e) {
                    final Throwable c = e.getCause();
                    if (verdict[r] == Verdict.MUST_COMPLETE) {
                        throw new AssertionError(call + ": the model says it must complete, but it failed", c);
                    }
                    assertClearError(c, sessions[r].spec(), r, call);
                    ERRORS.incrementAndGet();
                    if (verdict[r] == Verdict.CANNOT_COMPLETE) {
                        DOOMED.incrementAndGet();
                    }
                    broken[r] = true;
                    continue;
                } catch (final TimeoutException e) {
                    throw new AssertionError(call + ": the call did not end within its bound", e);
                } finally {
                    sessionOf[r].calls[r]++;
                }
                final Shape sh = shape[r];
                if (verdict[r] == Verdict.CANNOT_COMPLETE) {
                    fail(call + " returned although it could not complete: " + sh.show(got));
                }
                if (sh.ints) {
                    assertArrayEquals((int[]) sh.sum(), (int[]) got, call + ": not the sum of that call's inputs");
                } else {
                    assertArrayEquals(
                            (double[]) sh.sum(),
                            (double[]) got,
                            0.0,
                            call + ": not the exact sum of that call's inputs");
                }
                EXACT.incrementAndGet();
                if (verdict[r] == Verdict.MUST_COMPLETE) {
                    REQUIRED.incrementAndGet();
                }
            }
        }

        /** A clear error: the library's exception (or a refused state), naming job, rank and worker host:port. */
        private static void assertClearError(final Throwable c, final JobSpec spec, final int rank, final String call) {
            if (!(c instanceof SwitchMLException || c instanceof IllegalStateException) || c.getMessage() == null) {
                throw new AssertionError(call + " failed without a clear error", c);
            }
            final InetSocketAddress worker = spec.workers().get(rank);
            final String m = c.getMessage();
            if (!m.contains("job " + spec.jobName())
                    || !m.contains("rank " + rank)
                    || !m.contains(worker.getHostString() + ":" + worker.getPort())) {
                throw new AssertionError(
                        call + ": the error does not name job " + spec.jobName() + ", rank " + rank + " and worker "
                                + worker.getHostString() + ":" + worker.getPort() + ": " + m,
                        c);
            }
        }

        /** The model's verdict on rank r's call c (see the class comment). */
        private Verdict verdict(final int r, final int c, final boolean[] calling, final int[] index, final int crash) {
            if (!usable(r)) {
                return Verdict.CANNOT_COMPLETE;
            }
            boolean all = r != crash;
            for (int q = 0; q < n; q++) {
                if (q == r) {
                    continue;
                }
                final boolean now = calling[q] && sessionOf[q] == sessionOf[r] && index[q] == c;
                if (!now && currentRegistration.calls[q] <= c) {
                    return Verdict.CANNOT_COMPLETE;
                }
                all &= now && usable(q) && q != crash;
            }
            return all ? Verdict.MUST_COMPLETE : Verdict.MAY_COMPLETE;
        }

        /** After any sequence: fresh sockets, a new registration, and an exact call (bounded, patient). */
        void stillWorks() throws Exception {
            for (int r = 0; r < n; r++) {
                clients[r].close();
                clients[r] = SwitchMLClient.open(ClientOptions.defaults().withResultTimeoutMs(20_000));
                closed[r] = false;
                joined.get(r).clear();
                sessions[r] = null;
                sessionOf[r] = null;
            }
            register(true);
            for (int r = 0; r < n; r++) {
                join(r);
            }
            final int[][] in = new int[n][];
            final int[] sum = new int[5];
            for (int r = 0; r < n; r++) {
                in[r] = new int[] {r, 1, -r, 1 << 30, 7 * r};
                for (int i = 0; i < 5; i++) {
                    sum[i] += in[r][i];
                }
            }
            final List<Future<int[]>> calls = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                final JobSession s = sessions[r];
                final int[] v = in[r];
                calls.add(pool.submit(() -> s.allReduce(v)));
            }
            for (int r = 0; r < n; r++) {
                assertArrayEquals(sum, calls.get(r).get(60, TimeUnit.SECONDS), "rank " + r + " after the sequence");
            }
            assertEquals(0, sw.traffic().errors());
            assertTrue(sw.traffic().balanced(), sw.traffic().toString());
        }

        @Override
        public void close() {
            for (final SwitchMLClient c : clients) {
                c.close();
            }
            sw.close();
            pool.shutdownNow();
            crasher.shutdownNow();
        }
    }
}

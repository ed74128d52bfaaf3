package org.switchml.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.switchml.protocol.Wire;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Command-line options of {@link AllReduceBench} (picocli). Parsing never exits: a bad flag is a usage
 * error, which the caller turns into a message and exit code 2.
 */
@Command(
        name = "allreduce-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        versionProvider = Cli.Version.class,
        description = {
            "Measures SwitchML allreduce goodput on loopback: the aggregating software switch and the null",
            "reflector (echoes every contribution to its sender: same bytes, no aggregation), interleaved in",
            "the same run with the same data and settings. Without --workers/--elements it sweeps vector",
            "sizes 2^10, 2^12, ..., 2^24 and n = 2, 4, 8.",
            ""
        },
        footer = {
            "",
            "Exit codes: 0 ok, 1 verification failed, 2 bad flags, 3 run failed (e.g. timeout; one line,",
            "--verbose for the trace)."
        })
final class BenchOptions implements Cli.Validated {
    /** Vector sizes of the default sweep: 2^10, 2^12, ..., 2^24 elements. */
    static final List<Integer> DEFAULT_ELEMENTS =
            List.of(1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24);
    /** Worker counts of the default sweep. */
    static final List<Integer> DEFAULT_WORKERS = List.of(2, 4, 8);
    /** Default k: the best-performing size measured on loopback (docs/results/README.md, "k, pool and lanes on loopback"). */
    static final int DEFAULT_K = 4096;
    /** Default pool bytes in flight per worker when --pool is not given (pool = bytes / (4k)). */
    static final int DEFAULT_WINDOW_BYTES = 128 << 10;

    /** Largest pool x k: a switch holds two sets of that many int32 sums per job (256 MiB). */
    static final long MAX_POOL_INTS = 1L << 25;

    /** Which switches a cell measures. */
    enum Mode {
        BOTH,
        SWITCH,
        REFLECTOR
    }

    List<Integer> workers = DEFAULT_WORKERS;
    List<Integer> elements = DEFAULT_ELEMENTS;
    int k = DEFAULT_K;
    /** Slots per job; 0 = derived from k (DEFAULT_WINDOW_BYTES / 4k, at least 2 * lanes). */
    int pool;

    Values values = Values.GAUSSIAN;
    /** Loss probabilities: each is measured in every cell, interleaved with the others. */
    List<Double> losses = List.of(0.0);

    double dup;
    double reorder;
    long seed = 1;
    boolean seedGiven;
    /** Switch lanes = dataplane threads of each switch. */
    int lanes = 2;
    /** Event loop threads shared by the worker sockets; 0 = the library's default (max(2, cores)). */
    int clientThreads;
    /** Timed repeats per cell and switch; 0 = auto (more for small vectors). */
    int repeat;
    /** Untimed warm-up runs per cell and switch; -1 = auto. */
    int warmup = -1;
    /** Run the JIT warm-up (the requested cells, scaled down) before the first cell. */
    boolean jitWarmup = true;

    Mode mode = Mode.BOTH;
    /** First retransmission timeout of the workers, ms. */
    long rtoMs = 20;
    /** Result timeout of the workers (a call fails after this long without progress), ms. */
    long resultTimeoutMs = 30_000;

    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(final String message) {
            super(message);
        }
    }

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-n", "--workers"},
            paramLabel = "N[,N...]",
            order = 1,
            description = "workers per job (1..256); default sweep 2,4,8")
    void workers(final String value) {
        workers = checked(() -> intList("--workers", value, 1, Wire.MAX_WORKERS));
    }

    @Option(
            names = "--elements",
            paramLabel = "N[,N...]",
            order = 2,
            description = "vector length; accepts 2^p, 64K, 16M; default sweep 2^10..2^24 (powers of 4)")
    void elements(final String value) {
        elements = checked(() -> intList("--elements", value, 1, Integer.MAX_VALUE - 8));
    }

    @Option(
            names = "--k",
            paramLabel = "N",
            order = 3,
            description =
                    "int32 lanes per packet (1.." + Wire.MAX_K + "); default " + DEFAULT_K + " (the P4 switch uses 64)")
    void k(final String value) {
        k = (int) (long) checked(() -> number("--k", value, 1, Wire.MAX_K));
    }

    @Option(
            names = "--pool",
            paramLabel = "S",
            order = 4,
            description = "slots per job; default 128 KiB of payload / (4k), at least 2 per lane")
    void pool(final String value) {
        pool = (int) (long) checked(() -> number("--pool", value, 1, 1 << 16));
    }

    /** Aggregate double[] with FP64_SPLIT (--precision fp64), else float[] with FP32_BLOCK. */
    boolean fp64;

    @Option(
            names = "--precision",
            paramLabel = "P",
            order = 5,
            description = "fp32 (default): float[] with FP32_BLOCK;" + " fp64: double[] with FP64_SPLIT")
    void precision(final String value) {
        if (!value.equals("fp64") && !value.equals("fp32")) {
            throw Cli.usage(spec, "--precision must be fp64 or fp32, got '" + value + "'");
        }
        fp64 = value.equals("fp64");
    }

    @Option(names = "--fp64", order = 5, description = "the same as --precision fp64")
    void fp64(final boolean value) {
        fp64 = value;
    }

    @Option(
            names = "--values",
            paramLabel = "KIND",
            order = 6,
            description = "the values: one of ${COMPLETION-CANDIDATES}" + "; default gaussian",
            completionCandidates = ValueNames.class)
    void values(final String value) {
        values = Values.parse(value);
        if (values == null) {
            throw Cli.usage(spec, "--values must be one of " + Values.names() + ", got '" + value + "'");
        }
    }

    @Option(
            names = "--loss",
            paramLabel = "P[,P...]",
            order = 7,
            description = "probability each datagram is dropped "
                    + "(workers' and switch's sends); several: every cell measures each, interleaved, and reports goodput "
                    + "relative to the first (e.g. --loss 0,0.01,0.1)")
    void losses(final String value) {
        losses = checked(() -> probabilities("--loss", value));
    }

    @Option(names = "--dup", paramLabel = "P", order = 8, description = "probability each datagram is sent twice")
    void dup(final String value) {
        dup = checked(() -> probability("--dup", value));
    }

    @Option(
            names = "--reorder",
            paramLabel = "P",
            order = 9,
            description = "probability each datagram is held back up to 2 ms")
    void reorder(final String value) {
        reorder = checked(() -> probability("--reorder", value));
    }

    @Option(
            names = "--seed",
            paramLabel = "S",
            order = 10,
            description = "seed of data and faults; default 1 (always printed)")
    void seed(final String value) {
        seed = checked(() -> number("--seed", value, Long.MIN_VALUE, Long.MAX_VALUE));
        seedGiven = true;
    }

    @Option(
            names = {"--threads", "--lanes"},
            paramLabel = "L",
            order = 11,
            description = "switch lanes = dataplane threads of each switch (1..16); default 2")
    void lanes(final String value) {
        lanes = (int) (long) checked(() -> number("--threads", value, 1, 16));
    }

    @Option(
            names = "--client-threads",
            paramLabel = "C",
            order = 12,
            description = "event-loop threads shared by all worker sockets; default max(2, cores)")
    void clientThreads(final String value) {
        clientThreads = (int) (long) checked(() -> number("--client-threads", value, 1, 64));
    }

    @Option(
            names = "--reps",
            paramLabel = "R",
            order = 13,
            description =
                    "timed runs per cell and switch (median "
                            + "reported); default auto (9 at 2^20+ elements, up to 51 for small vectors); --repeat R also works")
    void repeat(final String value) {
        repeat = (int) (long) checked(() -> number("--reps", value, 1, 100_000));
    }

    /** The earlier name of {@code --reps}. */
    @Option(names = "--repeat", paramLabel = "R", hidden = true)
    void repeatAlias(final String value) {
        repeat = (int) (long) checked(() -> number("--repeat", value, 1, 100_000));
    }

    @Option(
            names = "--warm-up",
            paramLabel = "W",
            order = 14,
            description = "untimed runs per cell and switch before timing; default auto; --warmup W also works")
    void warmup(final String value) {
        warmup = (int) (long) checked(() -> number("--warm-up", value, 0, 100_000));
    }

    /** The earlier name of {@code --warm-up}. */
    @Option(names = "--warmup", paramLabel = "W", hidden = true)
    void warmupAlias(final String value) {
        warmup = (int) (long) checked(() -> number("--warmup", value, 0, 100_000));
    }

    @Option(
            names = {"--no-jit-warm-up", "--no-warmup"},
            order = 15,
            description = "skip the JIT warm-up before the "
                    + "first cell (it runs the requested cells, vectors cut to at most 2^18 elements, for about 3 s)")
    void noWarmup(final boolean value) {
        jitWarmup = !value;
    }

    @Option(names = "--mode", paramLabel = "M", order = 16, description = "both (default), switch or reflector")
    void mode(final String value) {
        mode = checked(() -> parseMode(value));
    }

    @Option(
            names = "--rto",
            paramLabel = "MS",
            order = 17,
            description = "workers' retransmission timeout before "
                    + "round trips are measured; default 20 (afterwards it follows them)")
    void rto(final String value) {
        rtoMs = checked(() -> number("--rto", value, 1, 60_000));
    }

    @Option(
            names = "--result-timeout",
            paramLabel = "MS",
            order = 18,
            description = "a call fails after this long without a result; default 30000")
    void resultTimeout(final String value) {
        resultTimeoutMs = checked(() -> number("--result-timeout", value, 1, 3_600_000));
    }

    @Option(
            names = "--verify",
            order = 19,
            description = "check every switch result bit for bit against the documented "
                    + "reference and the error bound of the exact sum (not timed); exit 1 on mismatch")
    boolean verify;

    /** Print the CPU time of each thread group per run. */
    @Option(
            names = "--cpu",
            order = 20,
            description = "also print CPU ms per run by thread group: switch lanes, worker "
                    + "event loops, allReduce callers, rest (GC, JIT, main)")
    boolean cpuDetail;

    @Option(
            names = "--verbose",
            order = 21,
            description = "on a failed run, the whole stack trace after the one-line " + "message")
    boolean verbose;

    /** The names --values accepts, for the usage text. */
    static final class ValueNames implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(Values.values())
                    .map(v -> v.name().toLowerCase(Locale.ROOT))
                    .iterator();
        }
    }

    /** A value parser that may reject its input. */
    private interface Parser<T> {
        T get() throws UsageException;
    }

    /** {@code parser}'s value; its usage error as picocli's. */
    private <T> T checked(final Parser<T> parser) {
        try {
            return parser.get();
        } catch (final UsageException e) {
            throw Cli.usage(spec, e.getMessage());
        }
    }

    @Override
    public void validate(final CommandLine cl) {
        if (fp64 && (k & 1) != 0) {
            throw Cli.usage(cl, "--precision fp64 needs an even --k (two int32 lanes per element), got " + k);
        }
        if (pool != 0 && pool < lanes) {
            // Legal, but some lanes would own no slot: say so rather than measure an odd set-up silently.
            throw Cli.usage(
                    cl,
                    "--pool " + pool + " is smaller than the number of switch lanes " + lanes
                            + " (--threads): some lanes would own no slot");
        }
        if (resultTimeoutMs < rtoMs) {
            throw Cli.usage(cl, "--result-timeout " + resultTimeoutMs + " must be >= --rto " + rtoMs);
        }
        if ((long) poolSize() * k > MAX_POOL_INTS) {
            // Each switch keeps 2 x pool x k int32 sums; say so rather than run out of memory later.
            throw Cli.usage(
                    cl,
                    "--pool " + poolSize() + " x --k " + k + " = " + (long) poolSize() * k
                            + " int32 per slot set is more than the benchmark allows (" + MAX_POOL_INTS + ")");
        }
    }

    /** Parses and checks a command line ({@code --help} is not handled here); a bad one raises {@link UsageException}. */
    static BenchOptions parse(final String[] args) throws UsageException {
        final BenchOptions o = new BenchOptions();
        final CommandLine cl = new CommandLine(o);
        try {
            cl.parseArgs(args);
            o.validate(cl);
        } catch (final ParameterException e) {
            throw new UsageException(e.getMessage());
        }
        return o;
    }

    /** Pool size used for a job: --pool, or DEFAULT_WINDOW_BYTES of payload per worker, at least 2 per lane. */
    int poolSize() {
        if (pool > 0) {
            return pool;
        }
        return Math.max(2 * lanes, Math.min(1 << 16, DEFAULT_WINDOW_BYTES / (4 * k)));
    }

    private static Mode parseMode(final String value) throws UsageException {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "both":
                return Mode.BOTH;
            case "switch":
                return Mode.SWITCH;
            case "reflector":
                return Mode.REFLECTOR;
            default:
                throw new UsageException("--mode must be both, switch or reflector, got '" + value + "'");
        }
    }

    /** A comma-separated list of distinct probabilities, each in [0, 1). */
    private static List<Double> probabilities(final String flag, final String value) throws UsageException {
        final List<Double> out = new ArrayList<>();
        for (final String part : value.split(",", -1)) {
            final double p = probability(flag, part.trim());
            if (out.contains(p)) {
                throw new UsageException(flag + " lists " + part.trim() + " twice");
            }
            out.add(p);
        }
        return List.copyOf(out);
    }

    private static double probability(final String flag, final String value) throws UsageException {
        final double p;
        try {
            p = Double.parseDouble(value);
        } catch (final NumberFormatException e) {
            throw new UsageException(flag + " needs a probability, got '" + value + "'");
        }
        if (!(p >= 0.0 && p < 1.0)) {
            throw new UsageException(flag + " must be in [0, 1), got " + value);
        }
        return p;
    }

    /** A comma-separated list of sizes, each a number, 2^p, or a number with suffix K/M (powers of 2). */
    private static List<Integer> intList(final String flag, final String value, final long min, final long max)
            throws UsageException {
        final List<Integer> out = new ArrayList<>();
        for (final String part : value.split(",")) {
            out.add((int) number(flag, part.trim(), min, max));
        }
        return List.copyOf(out);
    }

    /** Parses {@code 123}, {@code 2^20}, {@code 64K} (x1024) or {@code 16M} (x2^20), within [min, max]. */
    static long number(final String flag, final String text, final long min, final long max) throws UsageException {
        final long v;
        try {
            final String t = text.trim().toUpperCase(Locale.ROOT);
            if (t.startsWith("2^")) {
                final int p = Integer.parseInt(t.substring(2));
                if (p < 0 || p > 62) {
                    throw new NumberFormatException();
                }
                v = 1L << p;
            } else if (t.endsWith("K")) {
                v = Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 1)), 1024L);
            } else if (t.endsWith("M")) {
                v = Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 1)), 1L << 20);
            } else {
                v = Long.parseLong(t);
            }
        } catch (final NumberFormatException | ArithmeticException e) {
            throw new UsageException(flag + " needs a number (e.g. 1024, 2^20, 64K, 16M), got '" + text + "'");
        }
        if (v < min || v > max) {
            throw new UsageException(flag + " must be in " + min + ".." + max + ", got " + text);
        }
        return v;
    }
}

package org.switchml.examples;

import org.switchml.protocol.Wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Command-line options of {@link AllReduceBench}. Parsing never exits: a bad flag raises
 * {@link UsageException}, which the caller turns into a message and exit code 2.
 */
final class BenchOptions {
    /** Vector sizes of the default sweep: 2^10, 2^12, ..., 2^24 elements. */
    static final List<Integer> DEFAULT_ELEMENTS = List.of(1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20,
            1 << 22, 1 << 24);
    /** Worker counts of the default sweep. */
    static final List<Integer> DEFAULT_WORKERS = List.of(2, 4, 8);
    /** Default k: the best-performing size measured on loopback (docs/benchmarks.md). */
    static final int DEFAULT_K = 4096;
    /** Default pool bytes in flight per worker when --pool is not given (pool = bytes / (4k)). */
    static final int DEFAULT_WINDOW_BYTES = 128 << 10;

    /** Largest pool x k: a switch holds two sets of that many int32 sums per job (256 MiB). */
    static final long MAX_POOL_INTS = 1L << 25;

    /** Which switches a cell measures. */
    enum Mode { BOTH, SWITCH, REFLECTOR }

    List<Integer> workers = DEFAULT_WORKERS;
    List<Integer> elements = DEFAULT_ELEMENTS;
    int k = DEFAULT_K;
    /** Slots per job; 0 = derived from k (DEFAULT_WINDOW_BYTES / 4k, at least 2 * lanes). */
    int pool;
    boolean fp64;
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
    boolean verify;
    /** Print the CPU time of each thread group per run. */
    boolean cpuDetail;
    Mode mode = Mode.BOTH;
    /** First retransmission timeout of the workers, ms. */
    long rtoMs = 20;
    /** Result timeout of the workers (a call fails after this long without progress), ms. */
    long resultTimeoutMs = 30_000;
    boolean help;

    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(final String message) {
            super(message);
        }
    }

    /** {@code --flag=value} as {flag, value}; any other argument as {argument, null}. */
    static String[] splitFlag(final String arg) {
        final int eq = arg.indexOf('=');
        return arg.startsWith("--") && eq > 0 ? new String[] {arg.substring(0, eq), arg.substring(eq + 1)}
                : new String[] {arg, null};
    }

    static BenchOptions parse(final String[] args) throws UsageException {
        final BenchOptions o = new BenchOptions();
        for (int i = 0; i < args.length; i++) {
            final String[] split = BenchOptions.splitFlag(args[i]);
            final String flag = split[0];
            String value = split[1];
            switch (flag) {
                case "--help":
                case "-h":
                    o.help = true;
                    continue;
                case "--fp64":
                    o.fp64 = noValue(flag, value);
                    continue;
                case "--verify":
                    o.verify = noValue(flag, value);
                    continue;
                case "--cpu":
                    o.cpuDetail = noValue(flag, value);
                    continue;
                case "--no-warmup":
                    o.jitWarmup = !noValue(flag, value);
                    continue;
                default:
                    break;
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException(knownFlag(flag) ? flag + " needs a value" : "unknown flag '" + flag + "'");
                }
                value = args[++i];
            }
            switch (flag) {
                case "--workers":
                case "-n":
                    o.workers = intList(flag, value, 1, Wire.MAX_WORKERS);
                    break;
                case "--elements":
                    o.elements = intList(flag, value, 1, Integer.MAX_VALUE - 8);
                    break;
                case "--k":
                    o.k = (int) number(flag, value, 1, Wire.MAX_K);
                    break;
                case "--pool":
                    o.pool = (int) number(flag, value, 1, 1 << 16);
                    break;
                case "--values":
                    o.values = Values.parse(value);
                    if (o.values == null) {
                        throw new UsageException("--values must be one of " + Values.names() + ", got '" + value + "'");
                    }
                    break;
                case "--loss":
                    o.losses = probabilities(flag, value);
                    break;
                case "--dup":
                    o.dup = probability(flag, value);
                    break;
                case "--reorder":
                    o.reorder = probability(flag, value);
                    break;
                case "--seed":
                    o.seed = number(flag, value, Long.MIN_VALUE, Long.MAX_VALUE);
                    o.seedGiven = true;
                    break;
                case "--threads":
                case "--lanes":
                    o.lanes = (int) number(flag, value, 1, 16);
                    break;
                case "--client-threads":
                    o.clientThreads = (int) number(flag, value, 1, 64);
                    break;
                case "--repeat":
                    o.repeat = (int) number(flag, value, 1, 100_000);
                    break;
                case "--warmup":
                    o.warmup = (int) number(flag, value, 0, 100_000);
                    break;
                case "--mode":
                    o.mode = mode(value);
                    break;
                case "--rto":
                    o.rtoMs = number(flag, value, 1, 60_000);
                    break;
                case "--result-timeout":
                    o.resultTimeoutMs = number(flag, value, 1, 3_600_000);
                    break;
                default:
                    throw new UsageException("unknown flag '" + flag + "'");
            }
        }
        if (o.fp64 && (o.k & 1) != 0) {
            throw new UsageException("--fp64 needs an even --k (two int32 lanes per element), got " + o.k);
        }
        if (o.pool != 0 && o.pool < o.lanes) {
            // Legal, but some lanes would own no slot: say so rather than measure an odd set-up silently.
            throw new UsageException("--pool " + o.pool + " is smaller than the number of switch lanes " + o.lanes
                    + " (--threads): some lanes would own no slot");
        }
        if (o.resultTimeoutMs < o.rtoMs) {
            throw new UsageException("--result-timeout " + o.resultTimeoutMs + " must be >= --rto " + o.rtoMs);
        }
        if ((long) o.poolSize() * o.k > MAX_POOL_INTS) {
            // Each switch keeps 2 x pool x k int32 sums; say so rather than run out of memory later.
            throw new UsageException("--pool " + o.poolSize() + " x --k " + o.k + " = " + (long) o.poolSize() * o.k
                    + " int32 per slot set is more than the benchmark allows (" + MAX_POOL_INTS + ")");
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

    /** Flags that take a value. */
    private static final Set<String> VALUE_FLAGS = Set.of("--workers", "-n", "--elements", "--k", "--pool",
            "--values", "--loss", "--dup", "--reorder", "--seed", "--threads", "--lanes", "--client-threads",
            "--repeat", "--warmup", "--mode", "--rto", "--result-timeout");

    private static boolean knownFlag(final String flag) {
        return VALUE_FLAGS.contains(flag);
    }

    private static boolean noValue(final String flag, final String value) throws UsageException {
        if (value != null) {
            throw new UsageException(flag + " takes no value");
        }
        return true;
    }

    private static Mode mode(final String value) throws UsageException {
        switch (value.toLowerCase(Locale.ROOT)) {
            case "both": return Mode.BOTH;
            case "switch": return Mode.SWITCH;
            case "reflector": return Mode.REFLECTOR;
            default: throw new UsageException("--mode must be both, switch or reflector, got '" + value + "'");
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

    static final String USAGE = String.join("\n",
            "Usage: allreduce-bench [flags]",
            "",
            "Measures SwitchML allreduce goodput on loopback: the aggregating software switch and the null",
            "reflector (echoes every contribution to its sender: same bytes, no aggregation), interleaved in",
            "the same run with the same data and settings. Without --workers/--elements it sweeps vector",
            "sizes 2^10, 2^12, ..., 2^24 and n = 2, 4, 8.",
            "",
            "  --workers N[,N...]   workers per job (1..32); default sweep 2,4,8",
            "  --elements N[,N...]  vector length; accepts 2^p, 64K, 16M; default sweep 2^10..2^24 (powers of 4)",
            "  --k N                int32 lanes per packet (1.." + Wire.MAX_K + "); default " + DEFAULT_K
                    + " (the P4 switch uses 64)",
            "  --pool S             slots per job; default " + (DEFAULT_WINDOW_BYTES >> 10)
                    + " KiB of payload / (4k), at least 2 per lane",
            "  --fp64               aggregate double[] with FP64_SPLIT (default: float[] with FP32_BLOCK)",
            "  --values KIND        " + Values.names() + "; default gaussian",
            "  --loss P[,P...]      probability each datagram is dropped (workers' and switch's sends);",
            "                       several: every cell measures each, interleaved, and reports goodput",
            "                       relative to the first (e.g. --loss 0,0.01,0.1)",
            "  --dup P              probability each datagram is sent twice",
            "  --reorder P          probability each datagram is held back up to 2 ms",
            "  --seed S             seed of data and faults; default 1 (always printed)",
            "  --threads L          switch lanes = dataplane threads of each switch (1..16); default 2",
            "  --lanes L            same as --threads",
            "  --client-threads C   event-loop threads shared by all worker sockets; default max(2, cores)",
            "  --repeat R           timed runs per cell and switch (median reported); default auto",
            "                       (9 at 2^20+ elements, up to 51 for small vectors)",
            "  --warmup W           untimed runs per cell and switch before timing; default auto",
            "  --no-warmup          skip the JIT warm-up before the first cell (it runs the requested",
            "                       cells, vectors cut to at most 2^18 elements, for about 3 s)",
            "  --mode M             both (default), switch or reflector",
            "  --rto MS             workers' retransmission timeout before round trips are measured;",
            "                       default 20 (afterwards it follows them)",
            "  --result-timeout MS  a call fails after this long without a result; default 30000",
            "  --verify             check every switch result bit for bit against the documented reference",
            "                       and the error bound of the exact sum (not timed); exit 1 on mismatch",
            "  --cpu                also print CPU ms per run by thread group: switch lanes, worker event",
            "                       loops, allReduce callers, rest (GC, JIT, main)",
            "  --help               this text",
            "",
            "Exit codes: 0 ok, 1 verification failed, 2 bad flags, 3 run failed (e.g. timeout).");
}

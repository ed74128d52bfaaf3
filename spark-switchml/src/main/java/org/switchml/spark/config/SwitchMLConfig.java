package org.switchml.spark.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.network.util.JavaUtils;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;

/**
 * The registry of every {@code spark.switchml.*} setting. Each is a typed {@link ConfigEntry} with doc,
 * default and validation; docs/configuration.md is generated from {@link #ENTRIES} by
 * {@link #markdown()}.
 *
 * <p>Per-call settings (precision, fallback, timeouts) are read from the calling thread's Spark local
 * properties first ({@code sc.setLocalProperty}), then from the SparkConf, then the default.
 */
public final class SwitchMLConfig {
    /** The plugin to name in {@code spark.plugins}. */
    public static final String PLUGIN_CLASS = "org.switchml.spark.SwitchMLPlugin";
    /** The registrator to name in {@code spark.kryo.registrator}. */
    public static final String KRYO_REGISTRATOR_CLASS = "org.switchml.spark.SwitchMLKryoRegistrator";
    /** What to do when the switch cannot be reached. */
    public enum Fallback {
        /** Compute the same sum with {@code treeAggregate}, log one warning and count it. */
        TREE_AGGREGATE,
        /** Fail the call with an error naming the switch. */
        FAIL
    }

    /** Value encoding of {@code double[]} vectors on the wire. */
    public enum Precision {
        /** FP64_SPLIT: two int32 lanes per element, at least 50 significant bits per block. */
        FP64,
        /** FP32_BLOCK: one int32 per element, about 27 significant bits per block (n = 4). */
        FP32
    }

    private SwitchMLConfig() {}

    public static final ConfigEntry<String> SWITCH_ADDRESS = new ConfigEntry<>(
            "spark.switchml.switch.address",
            "Dataplane address of an external switch, `host:port[,port...]` (one port per lane), when it differs "
                    + "from what its job service reports or a registrar class installs the jobs. Empty: the job "
                    + "service's answer with `spark.switchml.jobService.address`, else an embedded software switch "
                    + "in the driver.",
            "",
            s -> {
                if (!s.isEmpty()) {
                    SwitchAddress.parse(s);
                }
                return s;
            },
            s -> true,
            "empty or host:port[,port...]");

    public static final ConfigEntry<String> JOB_SERVICE_ADDRESS = new ConfigEntry<>(
            "spark.switchml.jobService.address",
            "The job service (`host:port`) of a shared switch: `bin/switchml-switch` for the standalone software "
                    + "switch, `bin/switchml-controller` beside a P4 switch (docs/deployment.md). The driver opens a "
                    + "session there, renews its lease, and asks for each job. Empty: an embedded switch.",
            "",
            SwitchMLConfig::parseHostPort,
            s -> true,
            "empty or host:port");

    public static final ConfigEntry<String> AUTH_TOKEN_FILE = new ConfigEntry<>(
            "spark.switchml.auth.tokenFile",
            "File whose first line is the shared switch's bearer token, sent with every call to its job service "
                    + "(docs/security.md). Read on the driver only.",
            "",
            s -> s,
            s -> true,
            "empty or a file path");

    public static final ConfigEntry<String> TLS_TRUST_CERT = new ConfigEntry<>(
            "spark.switchml.tls.trustCertFile",
            "PEM certificate (the job service's own, or its CA) the driver trusts when it calls the job service "
                    + "over TLS. Empty: plaintext, allowed only to a loopback address.",
            "",
            s -> s,
            s -> true,
            "empty or a file path");

    public static final ConfigEntry<String> TLS_CERT = new ConfigEntry<>(
            "spark.switchml.tls.certFile",
            "PEM certificate chain the driver presents to a job service that asks for client certificates "
                    + "(with `spark.switchml.tls.keyFile`). Empty: none.",
            "",
            s -> s,
            s -> true,
            "empty or a file path");

    public static final ConfigEntry<String> TLS_KEY = new ConfigEntry<>(
            "spark.switchml.tls.keyFile",
            "PKCS#8 PEM key of `spark.switchml.tls.certFile`.",
            "",
            s -> s,
            s -> true,
            "empty or a file path");

    public static final ConfigEntry<Long> ADMISSION_TIMEOUT = new ConfigEntry<>(
            "spark.switchml.admissionTimeout",
            "How long a job request waits for room on a full shared switch (the service may bound it lower; "
                    + "docs/deployment.md says in which order requests are admitted); then "
                    + "`spark.switchml.fallback` applies, with a reason that says what the request lacked.",
            "10s",
            SwitchMLConfig::parseMillis,
            v -> v >= 1,
            "a duration >= 1ms");

    public static final ConfigEntry<String> REGISTRAR = new ConfigEntry<>(
            "spark.switchml.registrar",
            "Class implementing `org.switchml.spark.registrar.JobRegistrar` with a public constructor "
                    + "`(SwitchAddress, Map<String,String>)`: installs jobs on the external switch. Empty: "
                    + "the job service named by `spark.switchml.jobService.address`.",
            "",
            s -> s,
            s -> true,
            "empty or a class name");

    public static final ConfigEntry<String> SWITCH_HOST = new ConfigEntry<>(
            "spark.switchml.switch.host",
            "Address the embedded software switch binds. Empty: the driver's `spark.driver.host`.",
            "",
            s -> s,
            s -> true,
            "empty or a host name / IPv4 address");

    public static final ConfigEntry<Integer> SWITCH_LANES = new ConfigEntry<>(
            "spark.switchml.switch.lanes",
            "Lanes (UDP ports, one dataplane thread each) of the embedded software switch.",
            "2",
            Integer::parseInt,
            v -> v >= 1 && v <= 16,
            "an integer in 1..16");

    public static final ConfigEntry<Integer> K = new ConfigEntry<>(
            "spark.switchml.k",
            "int32 elements per packet. `auto`: 64 on a P4 switch (what p4/switchml.p4 is built for); on the "
                    + "software switch the largest k whose datagram fits the smallest MTU of the workers' and the "
                    + "switch's interfaces without IP fragmentation (362 on a 1500-byte network, 2236 at 9000), at "
                    + "most 4096 (the software switch's best measured k, which loopback gets). A number overrides "
                    + "it: 2.." + Wire.MAX_K + ", even in fp64 precision. Per call.",
            "auto",
            SwitchMLConfig::parseAuto,
            v -> v == 0 || (v >= 2 && v <= Wire.MAX_K),
            "auto or an integer in 2.." + Wire.MAX_K);

    public static final ConfigEntry<Integer> POOL_SIZE = new ConfigEntry<>(
            "spark.switchml.poolSize",
            "Slots per job (packets in flight per worker). `auto`: about 128 KiB in flight per worker, 4..128 "
                    + "slots (8 at k=4096, 128 at k=64). Per call.",
            "auto",
            SwitchMLConfig::parseAuto,
            v -> v == 0 || (v >= 1 && v <= 65536),
            "auto or an integer in 1..65536");

    public static final ConfigEntry<Precision> PRECISION = new ConfigEntry<>(
            "spark.switchml.precision",
            "`fp64`: FP64_SPLIT encoding, error at most n*2^(E-2B-2) per element (about 1e-16 of the block "
                    + "maximum). `fp32`: FP32_BLOCK, error at most n*2^(E-B-1) (about 1.5e-8 of the block maximum "
                    + "for 4 workers), half the bytes. See docs/protocol.md section 5. Per call.",
            "fp64",
            s -> Precision.valueOf(s.toUpperCase(Locale.ROOT)),
            v -> true,
            "fp64 or fp32");

    public static final ConfigEntry<Fallback> FALLBACK = new ConfigEntry<>(
            "spark.switchml.fallback",
            "When the switch is unreachable (registration fails or no result within the result timeout), or "
                    + "Spark refuses barrier stages (`spark.dynamicAllocation.enabled=true` on a cluster): "
                    + "`treeAggregate` computes the sum with Spark's treeAggregate, logs one warning and counts "
                    + "it; `fail` throws. Per call.",
            "treeAggregate",
            SwitchMLConfig::parseFallback,
            v -> true,
            "treeAggregate or fail");

    public static final ConfigEntry<Long> RESULT_TIMEOUT = new ConfigEntry<>(
            "spark.switchml.resultTimeout",
            "Bound on the wait for a switch result; an allreduce with no progress for this long fails "
                    + "(library default 30s; shorter under Spark so a dead switch or a dead attempt frees its "
                    + "slots quickly). Per call.",
            "10s",
            SwitchMLConfig::parseMillis,
            v -> v >= 1,
            "a duration >= 1ms (e.g. 500ms, 10s)");

    public static final ConfigEntry<Long> RETRANSMIT_TIMEOUT = new ConfigEntry<>(
            "spark.switchml.retransmitTimeout",
            "Retransmission timeout of a packet before round trips are measured; then it follows them (at "
                    + "least 1ms), and it backs off, up to 500ms, only while no result at all arrives. A packet "
                    + "overtaken by later results is sent again after about one round trip, whatever the timeout "
                    + "(docs/design.md, loss recovery). Read by each executor's worker when it starts.",
            "20ms",
            SwitchMLConfig::parseMillis,
            v -> v >= 1 && v <= 500,
            "a duration in 1ms..500ms");

    public static final ConfigEntry<Long> START_TIMEOUT = new ConfigEntry<>(
            "spark.switchml.stageStartTimeout",
            "Bound on the wait of a barrier stage's tasks for each other before the first allreduce: every task "
                    + "says hello to the driver, and every executor reads and folds its partitions. A task that "
                    + "Spark kills or that fails ends the wait at once; this bound only ends a stage that is stuck. "
                    + "Per call.",
            "10m",
            SwitchMLConfig::parseMillis,
            v -> v >= 1,
            "a duration >= 1ms");

    public static final ConfigEntry<Integer> STAGE_ATTEMPTS = new ConfigEntry<>(
            "spark.switchml.stageAttempts",
            "How many times a barrier stage is run before the call fails; each retry registers a new job "
                    + "generation and the replicated loop resumes from its last checkpoint.",
            "4",
            Integer::parseInt,
            v -> v >= 1 && v <= 100,
            "an integer in 1..100");

    public static final ConfigEntry<Long> KILL_POLL_INTERVAL = new ConfigEntry<>(
            "spark.switchml.killPollInterval",
            "How often a barrier task checks whether Spark killed it; a killed task closes its socket so "
                    + "its slot frees promptly.",
            "100ms",
            SwitchMLConfig::parseMillis,
            v -> v >= 1,
            "a duration >= 1ms");

    public static final ConfigEntry<Long> SLOT_WAIT = new ConfigEntry<>(
            "spark.switchml.slotWaitTimeout",
            "Before launching a barrier stage on a cluster, how long to wait for the executors the "
                    + "application asked for (`local-cluster` workers, or `spark.executor.instances`) to register; "
                    + "the stage then runs on the task slots there are, but needs at least one. Local masters do "
                    + "not wait.",
            "60s",
            SwitchMLConfig::parseMillis,
            v -> v >= 0,
            "a duration >= 0");

    public static final ConfigEntry<String> WORKER_HOST = new ConfigEntry<>(
            "spark.switchml.worker.host",
            "Address each executor's worker socket binds (one socket per executor, for the life of the "
                    + "application). Empty: the executor's host as Spark reports it, or, when that is a loopback "
                    + "address and the switch is not (a driver bound to loopback), the local address of the route to "
                    + "the switch. Set it when the executor's name resolves to an interface the switch cannot reach "
                    + "(e.g. a management network). A subnet "
                    + "`a.b.c.d/len` (e.g. the switch's data network, `10.0.0.0/24`) makes each executor bind its "
                    + "own interface address in that subnet, so one setting serves every executor.",
            "",
            s -> {
                if (s.contains("/")) {
                    WorkerHosts.parseSubnet(s);
                }
                return s;
            },
            s -> true,
            "empty, a host name / IPv4 address, or an IPv4 subnet a.b.c.d/len");

    public static final ConfigEntry<Boolean> LOCAL_SHORTCUT = new ConfigEntry<>(
            "spark.switchml.localShortcut",
            "When every task of a barrier stage runs in one executor (a `local[N]` master, or a cluster with "
                    + "one executor), the executor computes the switch's sum itself: the same quantization, "
                    + "integer sum and dequantization, so the same bits, with no packet and no switch job. "
                    + "`false` sends it through the switch all the same. Per call.",
            "true",
            SwitchMLConfig::parseBoolean,
            v -> true,
            "true or false");

    public static final ConfigEntry<Boolean> EXACT_SUMS = new ConfigEntry<>(
            "spark.switchml.exactSums",
            "Each source partition's vector is quantized on its own, with the block exponents agreed over every "
                    + "partition, and an executor sums its partitions' integers: the sum, and so a fit, depends only "
                    + "on the data, its partitioning and the params, never on which executor ran which partition or "
                    + "in which order (same bits run after run, whatever the placement). The headroom then covers "
                    + "the partitions, not the executors (fp64 keeps 63 - 2 log2(partitions) bits of each block's "
                    + "largest value), and an executor keeps one vector per partition it reads during a step. "
                    + "`false` sums an executor's partitions in floating point first. Per call.",
            "true",
            SwitchMLConfig::parseBoolean,
            v -> true,
            "true or false");

    /** Where a stage's aggregation runs when no external switch is configured. */
    public enum Placement {
        /**
         * Shards on the executors when a stage runs on two or more executors; the driver's embedded switch (or the
         * local shortcut) for one.
         */
        AUTO,
        /** The software switch embedded in the driver, for every stage: every vector crosses the driver's link. */
        DRIVER,
        /** Shards on the executors (and the extra shard hosts) for every stage of two or more executors. */
        EXECUTORS
    }

    public static final ConfigEntry<Placement> PLACEMENT = new ConfigEntry<>(
            "spark.switchml.switch.placement",
            "Where the aggregation runs when no external switch is configured (a configured "
                    + "`spark.switchml.jobService.address`, `spark.switchml.switch.address` or "
                    + "`spark.switchml.registrar` always wins). `auto`: a stage with two or more executors runs "
                    + "on switch shards hosted by the executors themselves, each owning a part of the vector, so "
                    + "each executor's link carries about 2(n-1)/n of the vector each way, as a ring allreduce's "
                    + "does; a stage with one executor uses the local shortcut or the driver's embedded switch. "
                    + "`executors`: the same. `driver`: the software switch embedded in the driver for every "
                    + "stage, where every vector crosses the driver's one link (docs/design.md, \"Placements\"). "
                    + "Read by every executor when it starts (with `driver` they host no shard); per call, "
                    + "`driver` also runs that call on the driver's switch.",
            "auto",
            s -> Placement.valueOf(s.toUpperCase(Locale.ROOT)),
            v -> true,
            "auto, executors or driver");

    public static final ConfigEntry<Integer> SHARD_LANES = new ConfigEntry<>(
            "spark.switchml.shards.lanes",
            "Lanes (UDP ports, one dataplane thread each) of the switch shard each executor hosts when the "
                    + "aggregation runs on the executors. Read by each executor when it starts.",
            "1",
            Integer::parseInt,
            v -> v >= 1 && v <= 16,
            "an integer in 1..16");

    public static final ConfigEntry<List<String>> SHARD_EXTRA_HOSTS = new ConfigEntry<>(
            "spark.switchml.shards.extraHosts",
            "Hosts that hold no data but run a shard of every sharded stage beside the executors' own, each "
                    + "with a link of its own: `driver` (the driver's embedded switch) and the job services "
                    + "(`host:port`) of standalone software switches (`bin/switchml-switch`), comma-separated; they "
                    + "use the token and TLS settings of `spark.switchml.auth.tokenFile` and `spark.switchml.tls.trustCertFile` (and the client certificate settings). "
                    + "The vector is split so that no link carries more than it must: with n executors and k extra "
                    + "hosts (k <= n), each link carries 2n(n-1)/(n^2+kn-2k) of the vector each way (the ring's "
                    + "2(n-1)/n at k = 0, one vector at k = n). Empty: the executors' shards alone.",
            "",
            SwitchMLConfig::parseShardHosts,
            v -> true,
            "empty, or a comma-separated list of driver and host:port");

    /** Every setting, in documentation order. */
    public static final List<ConfigEntry<?>> ENTRIES = List.of(
            SWITCH_ADDRESS,
            JOB_SERVICE_ADDRESS,
            AUTH_TOKEN_FILE,
            TLS_TRUST_CERT,
            TLS_CERT,
            TLS_KEY,
            ADMISSION_TIMEOUT,
            REGISTRAR,
            SWITCH_HOST,
            SWITCH_LANES,
            PLACEMENT,
            SHARD_LANES,
            SHARD_EXTRA_HOSTS,
            K,
            POOL_SIZE,
            PRECISION,
            FALLBACK,
            RESULT_TIMEOUT,
            RETRANSMIT_TIMEOUT,
            START_TIMEOUT,
            STAGE_ATTEMPTS,
            KILL_POLL_INTERVAL,
            SLOT_WAIT,
            WORKER_HOST,
            LOCAL_SHORTCUT,
            EXACT_SUMS);

    /** Settings from a SparkConf. */
    public static Function<String, String> of(final SparkConf conf) {
        return k -> conf.contains(k) ? conf.get(k) : null;
    }

    /** Settings from a map (e.g. a plugin's init map). */
    public static Function<String, String> of(final Map<String, String> map) {
        return map::get;
    }

    /** Settings for a call from the driver thread: local properties, then the SparkConf. */
    public static Function<String, String> forCall(final SparkContext sc) {
        final SparkConf conf = sc.conf();
        return k -> {
            final String local = sc.getLocalProperty(k);
            return local != null ? local : (conf.contains(k) ? conf.get(k) : null);
        };
    }

    /** Validates every {@code spark.switchml.*} key present: unknown keys and bad values fail. */
    public static void validate(final Function<String, String> settings, final Iterable<String> keys) {
        for (final String key : keys) {
            if (!key.startsWith("spark.switchml.")) {
                continue;
            }
            final ConfigEntry<?> e = ENTRIES.stream()
                    .filter(x -> x.key().equals(key))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown setting " + key + "; known: " + ENTRIES));
            e.from(settings);
        }
    }

    /** {@code auto} is 0; anything else must be an integer. */
    static int parseAuto(final String s) {
        return s.equalsIgnoreCase("auto") ? 0 : Integer.parseInt(s);
    }

    /** {@code true} or {@code false}, nothing else (a typo must not silently mean false). */
    static boolean parseBoolean(final String s) {
        if (s.equalsIgnoreCase("true")) {
            return true;
        }
        if (s.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("want true or false");
    }

    static Fallback parseFallback(final String s) {
        switch (s.toLowerCase(Locale.ROOT)) {
            case "treeaggregate":
                return Fallback.TREE_AGGREGATE;
            case "fail":
                return Fallback.FAIL;
            default:
                throw new IllegalArgumentException("unknown fallback " + s);
        }
    }

    /** The value {@code driver} of {@link #SHARD_EXTRA_HOSTS}. */
    public static final String DRIVER_SHARD = "driver";

    /** Parses a comma-separated list of {@code driver} and {@code host:port}; each at most once. */
    static List<String> parseShardHosts(final String s) {
        final List<String> out = new ArrayList<>();
        for (final String part : s.split(",")) {
            final String h = part.trim();
            if (h.isEmpty()) {
                continue;
            }
            if (!h.equalsIgnoreCase(DRIVER_SHARD)) {
                parseHostPort(h);
            }
            final String v = h.equalsIgnoreCase(DRIVER_SHARD) ? DRIVER_SHARD : h;
            if (out.contains(v)) {
                throw new IllegalArgumentException("'" + v + "' is listed twice");
            }
            out.add(v);
        }
        return List.copyOf(out);
    }

    /** Parses {@code host:port} (or empty), failing with what was wrong. */
    static String parseHostPort(final String s) {
        if (!s.isEmpty()) {
            final int c = s.lastIndexOf(':');
            if (c <= 0) {
                throw new IllegalArgumentException("want host:port, got '" + s + "'");
            }
            final int port = Integer.parseInt(s.substring(c + 1));
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("bad port in '" + s + "'");
            }
        }
        return s;
    }

    /**
     * A duration in milliseconds, in Spark's own syntax (its parser, as for {@code spark.network.timeout}): a
     * whole number and a unit, {@code us}, {@code ms}, {@code s}, {@code m} or {@code min}, {@code h} or
     * {@code d} ({@code 500ms}, {@code 10s}, {@code 2min}, {@code 1h}); a bare number is milliseconds. Less than
     * a millisecond is 0.
     */
    static long parseMillis(final String s) {
        try {
            return JavaUtils.timeStringAsMs(s);
        } catch (final NumberFormatException e) {
            // Spark's own message spans two lines; ours says the same in one.
            throw new IllegalArgumentException("want a whole number and a unit: us, ms, s, m or min, h, d");
        }
    }

    /** docs/configuration.md, generated from {@link #ENTRIES}. */
    public static String markdown() {
        final StringBuilder sb = new StringBuilder();
        sb.append("# spark-switchml configuration\n\n")
                .append("<!-- Generated from org.switchml.spark.config.SwitchMLConfig; do not edit. Regenerate with\n")
                .append(
                        "     mvn -pl spark-switchml test -Dtest=ConfigurationDocTest -Dswitchml.docs.write=true -->\n\n")
                .append("Enable with `spark.plugins=" + PLUGIN_CLASS + "` and, with Kryo,\n")
                .append("`spark.kryo.registrator=" + KRYO_REGISTRATOR_CLASS + "`. Settings marked\n")
                .append("\"Per call\" may also be set as a Spark local property (`sc.setLocalProperty`) on the\n")
                .append("thread that calls the operator. Durations are written as Spark writes them: a whole number\n")
                .append(
                        "and a unit, `us`, `ms`, `s`, `m` or `min`, `h`, `d` (`500ms`, `10s`, `2min`, `1h`); a bare number\n")
                .append("is milliseconds.\n\n")
                .append("| key | default | valid values | meaning |\n|---|---|---|---|\n");
        for (final ConfigEntry<?> e : ENTRIES) {
            sb.append("| `")
                    .append(e.key())
                    .append("` | ")
                    .append(e.defaultText().isEmpty() ? "(empty)" : "`" + e.defaultText() + "`")
                    .append(" | ")
                    .append(e.validText())
                    .append(" | ")
                    .append(e.doc().replace("|", "\\|"))
                    .append(" |\n");
        }
        return sb.toString();
    }
}

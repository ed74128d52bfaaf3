package org.switchml.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.client.ClientOptions;
import org.switchml.client.ShardedSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.ShardedJob;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;
import org.switchml.service.JobServiceClient;
import org.switchml.service.LeasedSession;
import org.switchml.transport.FaultPlan;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * One SwitchML allreduce participant per process, against an external switch (bin/switchml-switch), for
 * the emulated rack of examples/testbed (docs/testbed.md): each worker host runs its own JVM.
 *
 * <p>The coordinator connects to the switch's P4Runtime server, waits for the workers to announce their UDP
 * endpoints over a small TCP rendezvous, installs the job through the switch's job service, hands every
 * worker the installed {@link JobSpec} (with its secret), waits until each reports that it is done, and
 * removes the job. A worker announces itself, joins the job, runs its allreduces and checks every result
 * bit for bit against {@link ReferenceSum}: every worker regenerates all ranks' seeded vectors, so each
 * can compute the documented result alone.
 *
 * <p>The rendezvous speaks one text line each way and per step: the worker sends
 * {@code HELLO rank ip port}; the coordinator answers {@code JOB id generation secret k pool ip:port,...}
 * once all ranks arrived. Before each allreduce every worker sends {@code READY jit-ms} (how long its JIT
 * compiled since its previous READY) and waits for {@code WARM} (an untimed call) or {@code GO} (a timed
 * one), which the coordinator sends once all are ready: the calls start together, as the MPI baseline's do
 * after its barrier, so a worker's time is the allreduce's and not its wait for a slower peer to finish
 * checking the previous result. The worker ends with {@code DONE exact|mismatch|failed} after its timed
 * calls. Job set-up (session, job creation, rendezvous) is outside every timed call.
 */
@Command(
        name = "rack-allreduce",
        mixinStandardHelpOptions = true,
        versionProvider = Cli.Version.class,
        sortOptions = false,
        description = {
            "Runs one SwitchML worker, or the coordinator that installs the job, against an external switch.",
            "Exit codes: 0 ok, 1 a result differed from the reference, 2 usage, 3 the run failed."
        })
public final class RackAllReduce implements Callable<Integer> {
    static final int EXIT_OK = 0;
    static final int EXIT_MISMATCH = 1;
    static final int EXIT_FAILED = 3;

    /** A packet of 2048 lanes (8192 bytes, plus the SwitchML, UDP and IPv4 headers) fits the rack's 9000-byte MTU. */
    static final int DEFAULT_K = 2048;
    /** Longest rendezvous line accepted (the JOB line lists every worker's endpoint). */
    private static final int MAX_LINE = 1 << 16;

    /** The two roles. */
    enum Role {
        coordinator,
        worker
    }

    @Option(names = "--role", required = true, description = "coordinator or worker")
    Role role;

    @Option(names = "--workers", description = "coordinator: number of workers N (default ${DEFAULT-VALUE})")
    int workers = 2;

    @Option(names = "--listen", description = "coordinator: HOST:PORT of the rendezvous (default ${DEFAULT-VALUE})")
    String listen = "0.0.0.0:7070";

    @Option(
            names = "--job-service",
            description = "coordinator: the switch's job service HOST:PORT" + " (default ${DEFAULT-VALUE})")
    String jobService = "10.77.0.1:9560";

    @Option(names = "--token-file", description = "coordinator: the switch's bearer token file")
    String tokenFile;

    @Option(
            names = "--tls-trust",
            description = "coordinator: PEM certificate of the job service, for TLS" + " (default: plaintext)")
    String tlsTrust = "";

    @Option(
            names = "--k",
            description = "coordinator: int32 lanes per packet (default ${DEFAULT-VALUE}: fits MTU 9000)")
    int k = DEFAULT_K;

    @Option(
            names = "--pool",
            description = "coordinator: switch slots per job (default ${DEFAULT-VALUE}); a sharded"
                    + " job shares them among its shards in proportion to their parts, at least 2 each")
    int pool = 16;

    @Option(
            names = "--sharded",
            description = "coordinator: the job runs on switch shards, one in every worker"
                    + " (started with --shard-lanes) and one on each --extra-shard host, instead of on the switch of"
                    + " --job-service")
    boolean sharded;

    @Option(
            names = "--extra-shard",
            description = "coordinator, with --sharded: the job service HOST:PORT of a"
                    + " standalone switch (bin/switchml-switch) on a host without data that runs a shard too; repeatable."
                    + " The vector is split so that every link carries the same load")
    List<String> extraShards = new ArrayList<>();

    @Option(
            names = "--cpu-pid",
            description = "coordinator: a process whose CPU time (from /proc) over the timed"
                    + " calls is printed, e.g. the switch's; repeatable")
    List<Long> cpuPids = new ArrayList<>();

    @Option(
            names = "--shard-lanes",
            description = "worker: lanes of the switch shard this worker hosts for a"
                    + " sharded job, on its own address (default ${DEFAULT-VALUE}: none)")
    int shardLanes = 0;

    @Option(names = "--rank", description = "worker: this worker's rank, 0..N-1")
    int rank = -1;

    @Option(names = "--coordinator", description = "worker: the coordinator's rendezvous HOST:PORT")
    String coordinator;

    @Option(
            names = "--switch",
            description = "worker: the switch's dataplane HOST:PORT[,PORT...] (not needed for a" + " sharded job)")
    String switchAddress;

    @Option(
            names = "--bind",
            description = "worker: address of this worker's UDP socket (default: the address"
                    + " this host uses towards the coordinator)")
    String bind;

    @Option(names = "--elements", description = "worker: floats per allreduce (default ${DEFAULT-VALUE})")
    int elements = 1 << 20;

    @Option(names = "--reps", description = "worker: timed allreduces (default ${DEFAULT-VALUE})")
    int reps = 5;

    @Option(
            names = {"--warm-up", "--warmups"},
            description = "coordinator: untimed allreduces first, at least (default" + " ${DEFAULT-VALUE})")
    int warmups = 1;

    @Option(
            names = {"--warm-up-max-s", "--warmup-max-s"},
            description = "coordinator: after --warm-up, untimed allreduces go on while a"
                    + " worker's JIT compiler was busy during the previous one, for at most this many seconds of warm-up"
                    + " (default ${DEFAULT-VALUE}; 0: exactly --warmups)")
    int warmupMaxSeconds = 60;

    @Option(
            names = "--retransmit-timeout-ms",
            description =
                    "worker: first retransmission timeout, before a round"
                            + " trip is measured (default ${DEFAULT-VALUE}; a slow switch such as BMv2 queues packets for longer)")
    long retransmitTimeoutMs = ClientOptions.DEFAULT_RETRANSMIT_TIMEOUT_MS;

    @Option(names = "--seed", description = "worker: seed of every rank's vector (default ${DEFAULT-VALUE})")
    long seed = 42;

    @Option(
            names = "--timeout-s",
            description = "bound of every wait: rendezvous, one allreduce, the end" + " (default ${DEFAULT-VALUE})")
    int timeoutSeconds = 120;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Runs the command line; exits with its code. */
    public static void main(final String[] args) {
        System.exit(new CommandLine(new RackAllReduce()).execute(args));
    }

    @Override
    public Integer call() {
        try {
            return role == Role.coordinator ? coordinate() : work();
        } catch (final Failed e) {
            System.err.println("rack-allreduce: " + e.getMessage());
            return EXIT_FAILED;
        } catch (final CommandLine.ParameterException e) {
            throw e;
        } catch (final RuntimeException e) {
            System.err.println("rack-allreduce: " + role + (role == Role.worker ? " rank " + rank : "") + ": " + e);
            return EXIT_FAILED;
        }
    }

    private CommandLine.ParameterException usage(final String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    private long timeoutMs() {
        return timeoutSeconds * 1000L;
    }

    // ---------------------------------------------------------------- coordinator

    private int coordinate() throws Failed {
        if (workers < 1 || workers > 64) {
            throw usage("--workers must be 1..64, got " + workers);
        }
        if (k < 1 || k > Wire.MAX_K || pool < 1 || pool > JobSpec.MAX_POOL_SIZE) {
            throw usage("--k must be 1.." + Wire.MAX_K + " and --pool 1.." + JobSpec.MAX_POOL_SIZE);
        }
        if (warmups < 0 || warmupMaxSeconds < 0) {
            throw usage("--warm-up and --warm-up-max-s must not be negative");
        }
        if (!sharded && !extraShards.isEmpty()) {
            throw usage("--extra-shard needs --sharded");
        }
        final InetSocketAddress at = hostPort("--listen", listen);
        if (tokenFile == null && (!sharded || !extraShards.isEmpty())) {
            throw usage("the coordinator needs --token-file (the switch's bearer token)");
        }
        final List<LeasedSession> sessions = new ArrayList<>();
        try {
            final LeasedSession hub = sharded ? null : open(jobService, sessions);
            final List<LeasedSession> extras = new ArrayList<>();
            for (final String e : extraShards) {
                extras.add(open(e, sessions));
            }
            // A sharded job's id: the first extra host's range if there is one (its service hands this session its
            // own ids), else any (the workers' shards serve this job alone).
            final int jobId = hub != null
                    ? hub.grant().jobIdBase()
                    : !extras.isEmpty()
                            ? extras.get(0).grant().jobIdBase()
                            : 1 + new java.security.SecureRandom().nextInt(1 << 30);
            return coordinate(jobId, at, hub, extras);
        } finally {
            for (final LeasedSession s : sessions) {
                s.close();
            }
        }
    }

    /** A session with the job service at {@code hostPort} (added to {@code opened}). */
    private LeasedSession open(final String hostPort, final List<LeasedSession> opened) throws Failed {
        final InetSocketAddress service = hostPort("--job-service", hostPort);
        try {
            final LeasedSession s = new LeasedSession(
                    JobServiceClient.connect(
                            service.getHostString(),
                            service.getPort(),
                            TlsFiles.client(
                                    tlsTrust,
                                    "",
                                    "",
                                    BearerToken.read(Path.of(tokenFile)),
                                    service.getHostString(),
                                    "the job service at " + hostPort)),
                    "rack-allreduce");
            opened.add(s);
            return s;
        } catch (final RuntimeException e) {
            throw new Failed("cannot open a session with the job service at " + hostPort + ": " + e.getMessage());
        }
    }

    private int coordinate(
            final int jobId, final InetSocketAddress at, final LeasedSession hub, final List<LeasedSession> extras)
            throws Failed {
        final String job = "job " + Integer.toUnsignedString(jobId);
        final Socket[] peers = new Socket[workers];
        final String[] shardOf = new String[workers];
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(at);
            System.out.printf(
                    Locale.ROOT,
                    "rack-allreduce: coordinator of %s listening on %s for %d workers%n",
                    job,
                    at,
                    workers);
            System.out.flush();
            final List<InetSocketAddress> endpoints = rendezvous(server, peers, shardOf, job);
            final String line;
            if (hub != null) {
                final JobSpec installed;
                try {
                    installed = hub.create(new JobSpec(jobId, 0, k, pool, endpoints), 0);
                } catch (final RuntimeException e) {
                    throw new Failed(job + ": the switch's job service at " + jobService + " refused the job: "
                            + e.getMessage());
                }
                System.out.printf(
                        Locale.ROOT,
                        "rack-allreduce: installed %s: k=%d pool=%d workers %s%n",
                        job,
                        k,
                        pool,
                        endpoints);
                line = "JOB " + installed.jobId() + " " + installed.generation() + " " + installed.secret() + " "
                        + installed.k() + " " + installed.poolSize() + " " + endpointList(endpoints);
            } else {
                line = "SHARDS " + shardLine(jobId, endpoints, shardOf, extras, job);
            }
            for (final Socket s : peers) {
                send(s, line);
            }
            try {
                return collect(peers, job);
            } finally {
                if (hub != null) {
                    hub.remove(jobId);
                }
                for (int i = 0; i < extras.size(); i++) {
                    extras.get(i).remove(extras.get(i).grant().jobIdBase());
                }
                System.out.println("rack-allreduce: removed " + job);
            }
        } catch (final IOException e) {
            throw new Failed(job + ": rendezvous on " + at + ": " + e.getMessage());
        } finally {
            for (final Socket s : peers) {
                closeQuietly(s);
            }
        }
    }

    /** The smallest pool of one shard. */
    static final int MIN_SHARD_POOL = 2;

    /**
     * The parts of a sharded job: one on each worker's shard (its secret drawn here; the worker installs it) and
     * one on each extra host (installed here through its job service), weighted so that every link carries the
     * same load; as the SHARDS line's text: {@code k endpoints part...}, a part being
     * {@code address/jobId/generation/secret/pool/weight/hostRank}.
     */
    private String shardLine(
            final int jobId,
            final List<InetSocketAddress> endpoints,
            final String[] shardOf,
            final List<LeasedSession> extras,
            final String job)
            throws Failed {
        final int[] weights = ShardedJob.linkBalancedWeights(workers, extras.size());
        final int[] pools = ShardedJob.pools(pool, weights, MIN_SHARD_POOL);
        final StringBuilder parts = new StringBuilder();
        for (int r = 0; r < workers; r++) {
            if (shardOf[r] == null) {
                throw new Failed(job + ": rank " + r + " hosts no shard (start the workers with --shard-lanes N)");
            }
            parts.append(' ').append(part(shardOf[r], jobId, JobSpec.randomSecret(), pools[r], weights[r], r));
        }
        for (int i = 0; i < extras.size(); i++) {
            final LeasedSession e = extras.get(i);
            final JobSpec installed;
            try {
                installed = e.create(new JobSpec(e.grant().jobIdBase(), 0, k, pools[workers + i], endpoints), 0);
            } catch (final RuntimeException ex) {
                throw new Failed(
                        job + ": the extra shard host " + extraShards.get(i) + " refused its part: " + ex.getMessage());
            }
            parts.append(' ')
                    .append(part(
                            e.grant().switchDescription().dataplane().toString(),
                            installed.jobId(),
                            installed.secret(),
                            installed.poolSize(),
                            weights[workers + i],
                            -1));
        }
        System.out.printf(
                Locale.ROOT,
                "rack-allreduce: installed %s on %d shards (%d on the workers, %d extra):"
                        + " k=%d pools %s weights %s workers %s%n",
                job,
                workers + extras.size(),
                workers,
                extras.size(),
                k,
                Arrays.toString(pools),
                Arrays.toString(weights),
                endpoints);
        return k + " " + endpointList(endpoints) + parts;
    }

    private static String part(
            final String address,
            final int jobId,
            final int secret,
            final int pool,
            final int weight,
            final int hostRank) {
        return address + "/" + Integer.toUnsignedString(jobId) + "/0/" + secret + "/" + pool + "/" + weight + "/"
                + hostRank;
    }

    /**
     * Accepts until every rank announced itself; returns the endpoints in rank order, and the shard each hosts
     * (null: none) in {@code shardOf}.
     */
    private List<InetSocketAddress> rendezvous(
            final ServerSocket server, final Socket[] peers, final String[] shardOf, final String job)
            throws IOException, Failed {
        final InetSocketAddress[] endpoints = new InetSocketAddress[workers];
        final long deadline = System.nanoTime() + timeoutMs() * 1_000_000L;
        int arrived = 0;
        while (arrived < workers) {
            final long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new Failed(job + ": only " + arrived + " of " + workers + " workers announced themselves at "
                        + server.getLocalSocketAddress() + " within " + timeoutSeconds + " s (missing ranks "
                        + missing(endpoints) + ")");
            }
            server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
            final Socket s;
            try {
                s = server.accept();
            } catch (final SocketTimeoutException e) {
                continue;
            }
            s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMs()));
            final String hello = receive(s, job + ", a worker at " + s.getRemoteSocketAddress());
            final String[] f = hello.split(" ");
            if ((f.length != 4 && f.length != 5) || !f[0].equals("HELLO")) {
                closeQuietly(s);
                throw new Failed(job + ": a worker at " + s.getRemoteSocketAddress() + " sent '" + hello
                        + "', expected HELLO rank ip port [shard]");
            }
            final int r = Integer.parseInt(f[1]);
            if (r < 0 || r >= workers || endpoints[r] != null) {
                closeQuietly(s);
                throw new Failed(job + ": a worker at " + s.getRemoteSocketAddress() + " announced rank " + r
                        + ", which is " + (r < 0 || r >= workers ? "outside 0.." + (workers - 1) : "taken"));
            }
            endpoints[r] = new InetSocketAddress(InetAddress.getByName(f[2]), Integer.parseInt(f[3]));
            shardOf[r] = f.length == 5 ? f[4] : null;
            peers[r] = s;
            arrived++;
        }
        return Arrays.asList(endpoints);
    }

    /**
     * Releases each round of allreduces once every worker is READY, then waits, bounded, for every worker's
     * DONE line; returns the exit code they add up to. A round where some workers are done (or failed) and
     * others ready ends the run: those waiting for WARM or GO see the connection close.
     *
     * <p>The first rounds are warm-ups (WARM): at least {@link #warmups}, then more while a worker reports that
     * its JIT compiler was busy for more than {@link #JIT_QUIET_FRACTION} of the previous round, for at most
     * {@link #warmupMaxSeconds}. Ten fresh JVMs on two cores compile for tens of seconds, and a call timed
     * meanwhile measures the compilers, not the links. Every round after them is timed (GO).
     */
    private int collect(final Socket[] peers, final String job) throws Failed {
        final String[] lines = new String[peers.length];
        int warmed = 0;
        boolean timing = false;
        long warmupStartNs = 0;
        long roundStartNs = 0;
        while (true) {
            int ready = 0;
            long mostJitMs = 0;
            for (int r = 0; r < peers.length; r++) {
                try {
                    lines[r] = receive(peers[r], job + ", rank " + r + " at " + peers[r].getRemoteSocketAddress());
                } catch (final IOException e) {
                    throw new Failed(job + ": rank " + r + " at " + peers[r].getRemoteSocketAddress()
                            + " did not report: " + e.getMessage());
                }
                final String[] f = lines[r].split(" ");
                if (f.length == 2 && f[0].equals("READY")) {
                    ready++;
                    try {
                        mostJitMs = Math.max(mostJitMs, Long.parseLong(f[1]));
                    } catch (final NumberFormatException e) {
                        throw new Failed(job + ": rank " + r + " at " + peers[r].getRemoteSocketAddress() + " sent '"
                                + lines[r] + "', expected READY and its JIT milliseconds");
                    }
                }
            }
            if (ready < peers.length) {
                break;
            }
            final long now = System.nanoTime();
            if (!timing) {
                final long roundMs = (now - roundStartNs) / 1_000_000L;
                final boolean compiling = warmed == 0 || mostJitMs > JIT_QUIET_FRACTION * roundMs;
                if (warmed == 0) {
                    warmupStartNs = now;
                } else {
                    System.out.printf(
                            Locale.ROOT,
                            "rack-allreduce: warm-up %d took %d ms, the busiest worker's JIT" + " compiled for %d ms%n",
                            warmed,
                            roundMs,
                            mostJitMs);
                }
                final boolean capped = now - warmupStartNs >= warmupMaxSeconds * 1_000_000_000L;
                if (warmed >= warmups && (!compiling || capped)) {
                    timing = true;
                    System.out.printf(
                            Locale.ROOT,
                            "rack-allreduce: %d warm-up calls in %.1f s, %s; timed calls" + " start%n",
                            warmed,
                            (now - warmupStartNs) / 1e9,
                            compiling ? "JIT still busy at the " + warmupMaxSeconds + " s cap" : "JIT quiet");
                    System.out.flush();
                }
            }
            roundStartNs = now;
            if (timing && cpuAtStart == null) {
                cpuAtStart = cpuSeconds(cpuPids);
            }
            final String release = timing ? "GO" : "WARM";
            if (!timing) {
                warmed++;
            }
            for (int r = 0; r < peers.length; r++) {
                try {
                    send(peers[r], release);
                } catch (final IOException e) {
                    throw new Failed(job + ": rank " + r + " at " + peers[r].getRemoteSocketAddress()
                            + " cannot be released: " + e.getMessage());
                }
            }
        }
        if (cpuAtStart != null) {
            final double[] end = cpuSeconds(cpuPids);
            for (int i = 0; i < cpuPids.size(); i++) {
                System.out.printf(
                        Locale.ROOT,
                        "rack-allreduce: cpu pid=%d seconds=%.3f (over the timed calls)%n",
                        cpuPids.get(i),
                        end[i] - cpuAtStart[i]);
            }
        }
        int code = EXIT_OK;
        for (final String done : lines) {
            if (done.equals("DONE mismatch")) {
                code = Math.max(code, EXIT_MISMATCH);
            } else if (!done.equals("DONE exact")) {
                code = EXIT_FAILED;
            }
        }
        return code;
    }

    /** CPU seconds of every --cpu-pid when the timed calls started. */
    private double[] cpuAtStart;

    /** CPU seconds (user + system, from /proc/PID/stat) of each process; NaN for one that is gone. */
    static double[] cpuSeconds(final List<Long> pids) {
        final double[] out = new double[pids.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = cpuSeconds("/proc/" + pids.get(i) + "/stat");
        }
        return out;
    }

    /**
     * CPU seconds (user + system) of the process whose stat file is {@code stat}, in the kernel's USER_HZ ticks
     * of 1/100 s (fixed by the Linux ABI); NaN when it cannot be read.
     */
    static double cpuSeconds(final String stat) {
        try {
            final String text = Files.readString(Path.of(stat));
            // Fields after the command name (which may hold spaces) in parentheses: state is field 3, utime 14, stime
            // 15.
            final String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        } catch (final IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** A round in which no worker's JIT compiled for more than this fraction of it is quiet. */
    static final double JIT_QUIET_FRACTION = 0.02;

    private static String missing(final InetSocketAddress[] endpoints) {
        final List<Integer> out = new ArrayList<>();
        for (int r = 0; r < endpoints.length; r++) {
            if (endpoints[r] == null) {
                out.add(r);
            }
        }
        return out.toString();
    }

    private static String endpointList(final List<InetSocketAddress> endpoints) {
        final StringBuilder sb = new StringBuilder();
        for (final InetSocketAddress a : endpoints) {
            sb.append(sb.length() == 0 ? "" : ",")
                    .append(a.getAddress().getHostAddress())
                    .append(':')
                    .append(a.getPort());
        }
        return sb.toString();
    }

    // ---------------------------------------------------------------- worker

    private int work() throws Failed {
        if (rank < 0) {
            throw usage("--role worker needs --rank R (0..N-1)");
        }
        if (coordinator == null) {
            throw usage("--role worker needs --coordinator HOST:PORT");
        }
        if (elements < 1 || reps < 1 || retransmitTimeoutMs < 1) {
            throw usage("--elements, --reps and --retransmit-timeout-ms must be positive");
        }
        if (shardLanes < 0 || shardLanes > 16) {
            throw usage("--shard-lanes must be 0..16, got " + shardLanes);
        }
        final InetSocketAddress coord = hostPort("--coordinator", coordinator);
        SwitchAddress sw = null;
        if (switchAddress != null) {
            try {
                sw = SwitchAddress.parse(switchAddress);
            } catch (final IllegalArgumentException e) {
                throw usage("--switch: " + e.getMessage());
            }
        }
        final String who = "rank " + rank;
        try (Socket s = connect(coord, who)) {
            final String bindHost = bind != null ? bind : s.getLocalAddress().getHostAddress();
            final ClientOptions options = ClientOptions.defaults()
                    .withBindHost(bindHost)
                    .withResultTimeoutMs(timeoutMs())
                    .withRetransmitTimeoutMs(
                            retransmitTimeoutMs,
                            Math.max(retransmitTimeoutMs, ClientOptions.DEFAULT_MAX_RETRANSMIT_TIMEOUT_MS));
            final SoftwareSwitch shard = shardLanes == 0
                    ? null
                    : SoftwareSwitch.start(
                            new SwitchOptions(bindHost, Collections.nCopies(shardLanes, 0), false, FaultPlan.NONE));
            try (SwitchMLClient client = SwitchMLClient.open(options)) {
                final InetSocketAddress local = client.localAddress();
                send(
                        s,
                        "HELLO " + rank + " " + local.getAddress().getHostAddress() + " " + local.getPort()
                                + (shard == null ? "" : " " + shard.address()));
                final String line = receive(s, who + " at " + local + ", waiting for the job from " + coord);
                final ShardedJob job =
                        line.startsWith("SHARDS ") ? parseShards(line, who, shard) : single(line, who, sw);
                final String where = "job " + job.jobName() + " " + who + " (worker " + local + ", "
                        + (job.size() == 1 ? "switch " : "shards ") + job.shardNames() + ")";
                final String outcome = run(client, job, where, s);
                send(s, "DONE " + outcome);
                return outcome.equals("exact") ? EXIT_OK : EXIT_MISMATCH;
            } catch (final Failed e) {
                sendQuietly(s, "DONE failed");
                throw e;
            } finally {
                if (shard != null) {
                    shard.close();
                }
            }
        } catch (final IOException e) {
            throw new Failed(who + ": rendezvous with " + coord + ": " + e.getMessage());
        }
    }

    /** The job of a JOB line, on the switch of --switch. */
    private ShardedJob single(final String line, final String who, final SwitchAddress sw) throws Failed {
        if (sw == null) {
            throw usage("the coordinator runs the job on a switch: the worker needs --switch HOST:PORT[,PORT...]");
        }
        return ShardedJob.single(sw, parseJob(line, who));
    }

    /**
     * The sharded job of a SHARDS line; this worker's part is installed on its own {@code shard}. Every part's
     * workers, k and secret are the coordinator's.
     */
    private ShardedJob parseShards(final String line, final String who, final SoftwareSwitch shard) throws Failed {
        final String[] f = line.split(" ");
        if (f.length < 4) {
            throw new Failed(who + ": the coordinator sent '" + line + "', expected SHARDS k endpoints part...");
        }
        final int kk = Integer.parseInt(f[1]);
        final List<InetSocketAddress> endpoints = parseEndpoints(f[2]);
        final List<ShardedJob.Part> parts = new ArrayList<>();
        for (int i = 3; i < f.length; i++) {
            final String[] p = f[i].split("/");
            if (p.length != 7) {
                throw new Failed(who + ": bad shard '" + f[i] + "' from the coordinator");
            }
            final JobSpec spec = new JobSpec(
                    Integer.parseUnsignedInt(p[1]),
                    Integer.parseInt(p[2]),
                    Integer.parseInt(p[3]),
                    kk,
                    Integer.parseInt(p[4]),
                    endpoints);
            final int hostRank = Integer.parseInt(p[6]);
            if (hostRank == rank) {
                if (shard == null) {
                    throw new Failed(who + ": the coordinator placed a shard on this worker, which hosts none"
                            + " (--shard-lanes)");
                }
                shard.registerJob(spec);
            }
            parts.add(new ShardedJob.Part(SwitchAddress.parse(p[0]), spec, Integer.parseInt(p[5])));
        }
        return new ShardedJob(parts);
    }

    /** Connects to the coordinator, retrying until the bound: it may still be starting. */
    private Socket connect(final InetSocketAddress coord, final String who) throws Failed {
        final long deadline = System.nanoTime() + timeoutMs() * 1_000_000L;
        IOException last = null;
        while (System.nanoTime() < deadline) {
            final Socket s = new Socket();
            try {
                s.connect(coord, 2_000);
                s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMs()));
                return s;
            } catch (final IOException e) {
                closeQuietly(s);
                last = e;
            }
            try {
                Thread.sleep(200);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Failed(who + ": interrupted while connecting to " + coord);
            }
        }
        throw new Failed(who + ": no coordinator at " + coord + " within " + timeoutSeconds + " s"
                + (last != null ? ": " + last.getMessage() : ""));
    }

    /**
     * Warm-ups, then the timed allreduces, each started together with the other workers' (READY, GO through
     * {@code coord}) and its result checked; returns exact or mismatch.
     */
    private String run(final SwitchMLClient client, final ShardedJob job, final String where, final Socket coord)
            throws Failed, IOException {
        final int n = job.numWorkers();
        final BenchVectors vectors = BenchVectors.generate(Values.GAUSSIAN, n, elements, false, seed);
        final ReferenceSum reference = ReferenceSum.of(vectors, job.k());
        final ShardedSession session = client.join(job, rank, timeoutMs());
        final float[] mine = vectors.floats[rank];
        final long[] nanos = new long[reps];
        final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long jitSeenMs = jitMs(jit);
        String firstMismatch = null;
        int timed = 0;
        double cpuAtFirstTimed = Double.NaN;
        for (int call = 1; timed < reps; call++) {
            final long jitNowMs = jitMs(jit);
            send(coord, "READY " + (jitNowMs - jitSeenMs));
            jitSeenMs = jitNowMs;
            final String go = receive(coord, where + ", waiting for the other workers before allreduce " + call);
            if (!go.equals("GO") && !go.equals("WARM")) {
                throw new Failed(where + ": the coordinator sent '" + go + "', expected WARM or GO");
            }
            if (go.equals("GO") && timed == 0) {
                cpuAtFirstTimed = cpuSeconds("/proc/self/stat");
            }
            final long t0 = System.nanoTime();
            final float[] result;
            try {
                result = session.allReduce(mine);
            } catch (final RuntimeException e) {
                throw new Failed(where + ": allreduce " + call + " failed: " + e.getMessage() + "; worker counters "
                        + client.stats());
            }
            final long t = System.nanoTime() - t0;
            if (go.equals("GO")) {
                nanos[timed++] = t;
            }
            try {
                reference.checkResult(rank, result);
            } catch (final ReferenceSum.Mismatch e) {
                if (firstMismatch == null) {
                    firstMismatch = e.getMessage();
                }
            }
        }
        if (firstMismatch != null) {
            System.err.println("rack-allreduce: " + where + ": " + firstMismatch + " (seed " + seed + ")");
        }
        // This JVM's CPU over the timed calls (its worker, and its shard when it hosts one), checks of results
        // included: what the machine spends per call beside the network.
        final double cpu = cpuSeconds("/proc/self/stat") - cpuAtFirstTimed;
        final double seconds = median(nanos) / 1e9;
        System.out.printf(
                Locale.ROOT,
                "rank=%d elements=%d reps=%d median_s=%.6f goodput_gbps=%.6g exact=%b"
                        + " retransmissions=%d loss_detected=%d packets_sent=%d cpu_s=%.3f%n",
                rank,
                elements,
                reps,
                seconds,
                32.0 * elements / seconds / 1e9,
                firstMismatch == null,
                client.stats().retransmissions(),
                client.stats().lossDetected(),
                client.stats().packetsSent(),
                cpu);
        System.out.flush();
        return firstMismatch == null ? "exact" : "mismatch";
    }

    /** Milliseconds the JIT compilers have worked since the JVM started (0 where the JVM does not say). */
    private static long jitMs(final CompilationMXBean jit) {
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    private JobSpec parseJob(final String line, final String who) throws Failed {
        final String[] f = line.split(" ");
        if (f.length != 7 || !f[0].equals("JOB")) {
            throw new Failed(
                    who + ": the coordinator sent '" + line + "', expected JOB id gen secret k pool endpoints");
        }
        return new JobSpec(
                Integer.parseUnsignedInt(f[1]),
                Integer.parseInt(f[2]),
                Integer.parseInt(f[3]),
                Integer.parseInt(f[4]),
                Integer.parseInt(f[5]),
                parseEndpoints(f[6]));
    }

    private static List<InetSocketAddress> parseEndpoints(final String list) {
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        for (final String e : list.split(",")) {
            final int c = e.lastIndexOf(':');
            endpoints.add(new InetSocketAddress(e.substring(0, c), Integer.parseInt(e.substring(c + 1))));
        }
        return endpoints;
    }

    // ---------------------------------------------------------------- shared

    private InetSocketAddress hostPort(final String option, final String text) {
        final int c = text.lastIndexOf(':');
        try {
            final int port = Integer.parseInt(text.substring(c + 1));
            if (c <= 0 || port < 1 || port > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(text.substring(0, c), port);
        } catch (final NumberFormatException | StringIndexOutOfBoundsException e) {
            throw usage(option + " must be HOST:PORT, got '" + text + "'");
        }
    }

    private static void send(final Socket s, final String line) throws IOException {
        final OutputStream out = s.getOutputStream();
        out.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private static void sendQuietly(final Socket s, final String line) {
        try {
            send(s, line);
        } catch (final IOException e) {
            // The coordinator then reports that this rank did not answer.
        }
    }

    /**
     * One line from {@code s}, within the socket's timeout; {@code what} names the wait in a failure. Reads
     * byte by byte, so nothing after the line is taken from the socket before its own receive.
     */
    private String receive(final Socket s, final String what) throws IOException, Failed {
        final InputStream in = s.getInputStream();
        final StringBuilder line = new StringBuilder();
        while (true) {
            final int b;
            try {
                b = in.read();
            } catch (final SocketTimeoutException e) {
                throw new Failed(
                        what + ": nothing from " + s.getRemoteSocketAddress() + " within " + timeoutSeconds + " s");
            }
            if (b < 0) {
                throw new Failed(what + ": " + s.getRemoteSocketAddress() + " closed the connection");
            }
            if (b == '\n') {
                return line.toString().trim();
            }
            if (line.length() > MAX_LINE) {
                throw new Failed(what + ": " + s.getRemoteSocketAddress() + " sent a line longer than " + MAX_LINE);
            }
            line.append((char) b);
        }
    }

    private static void closeQuietly(final Socket s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (final IOException e) {
            // Nothing left to do with a socket that cannot close.
        }
    }

    private static double median(final long[] values) {
        final long[] s = values.clone();
        Arrays.sort(s);
        final int m = s.length / 2;
        return (s.length & 1) == 1 ? s[m] : (s[m - 1] + s[m]) / 2.0;
    }

    /** A run that could not complete: the message names the job or rank, host and port. */
    static final class Failed extends Exception {
        private static final long serialVersionUID = 1L;

        Failed(final String message) {
            super(message);
        }
    }
}

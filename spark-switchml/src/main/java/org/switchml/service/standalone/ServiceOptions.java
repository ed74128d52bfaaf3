package org.switchml.service.standalone;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.switchml.auth.Tenants;
import org.switchml.auth.TlsFiles;
import org.switchml.control.SwitchController;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceServer;
import org.switchml.service.Quotas;
import org.switchml.service.SwitchDescription;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The job service's command-line options, shared by both programs, and how they start it. */
final class ServiceOptions {
    /** The job service's conventional port. */
    static final int DEFAULT_PORT = 9560;

    @Option(
            names = "--service-host",
            paramLabel = "H",
            description =
                    "address the job service binds (default ${DEFAULT-VALUE}: loopback only; any other address needs --tls-cert and --tls-key)")
    String host = "127.0.0.1";

    @Option(
            names = "--service-port",
            paramLabel = "P",
            description = "job service (gRPC) port, 0 for a free one (default ${DEFAULT-VALUE})")
    int port = DEFAULT_PORT;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            description =
                    "the applications' bearer tokens, one per line, one per tenant; mode 600 (refused when its group or others may read it); created with one random token when missing (default ${DEFAULT-VALUE})")
    Path tokenFile = Path.of(System.getProperty("user.home"), ".switchml", "token");

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "the service's certificate chain (TLS)")
    String tlsCert = "";

    @Option(names = "--tls-key", paramLabel = "PEM", description = "its PKCS#8 private key")
    String tlsKey = "";

    @Option(names = "--client-ca", paramLabel = "PEM", description = "require client certificates signed by this CA")
    String clientCa = "";

    @Option(
            names = "--renew-interval-ms",
            paramLabel = "MS",
            description =
                    "how often drivers renew their lease; a driver that stops renewing loses its jobs within 2.6 intervals (default ${DEFAULT-VALUE})")
    long renewIntervalMs = JobDesk.Options.DEFAULT.renewIntervalMs();

    @Option(
            names = "--admission-timeout-ms",
            paramLabel = "MS",
            description = "longest wait of a job request for room on a full switch (default ${DEFAULT-VALUE})")
    long admissionTimeoutMs = JobDesk.Options.DEFAULT.admissionTimeoutMs();

    @Option(
            names = "--admission-reserve-after-ms",
            paramLabel = "MS",
            description =
                    "how long a waiting request may be overtaken by later ones that fit; then it reserves what it needs (default ${DEFAULT-VALUE})")
    long reserveAfterMs = JobDesk.Options.DEFAULT.reserveAfterMs();

    @Option(
            names = "--max-applications",
            paramLabel = "N",
            description = "sessions at once, 1..128 (default ${DEFAULT-VALUE})")
    int maxApplications = Quotas.DEFAULT.sessions();

    @Option(
            names = "--max-sessions-per-token",
            paramLabel = "N",
            description = "sessions at once with one tenant's token (default: 16 when the token file holds several "
                    + "tenants' tokens, else no bound but --max-applications)")
    Integer maxSessionsPerToken;

    @Option(
            names = "--max-jobs-per-session",
            paramLabel = "N",
            description = "jobs one session may hold, its waiting requests included (default ${DEFAULT-VALUE})")
    int maxJobsPerSession = Quotas.DEFAULT.jobsPerSession();

    @Option(
            names = "--max-waiters-per-session",
            paramLabel = "N",
            description = "requests of one session that may wait for room at once (default ${DEFAULT-VALUE})")
    int maxWaitersPerSession = Quotas.DEFAULT.waitersPerSession();

    @Option(
            names = "--max-slots-per-job",
            paramLabel = "N",
            description = "pool slots one job may ask for (default ${DEFAULT-VALUE})")
    int maxSlotsPerJob = Quotas.DEFAULT.slotsPerJob();

    @Option(
            names = "--max-job-bytes",
            paramLabel = "BYTES",
            description =
                    "switch state one job may make the switch allocate, 2 S (4 k + 8 ceil(n/64) + 11) bytes; k, m, g suffixes (default 32m)")
    String maxJobBytes = "32m";

    @Option(
            names = "--max-bytes",
            paramLabel = "BYTES",
            description = "switch state of all jobs together; k, m, g suffixes (default 256m)")
    String maxBytes = "256m";

    @Option(
            names = "--max-workers",
            paramLabel = "N",
            description = "workers of all jobs together (default: what the switch's worker table holds, 2048)")
    int maxWorkers;

    @Option(
            names = "--token-share-percent",
            paramLabel = "P",
            description =
                    "share of the switch's slots, jobs, workers and bytes one token's sessions may hold together, "
                            + "1..100 (default: 50 when the token file holds several tenants' tokens, else 100: no share)")
    Integer tokenSharePercent;

    @Option(
            names = "--max-workers-per-job",
            paramLabel = "N",
            description =
                    "most workers (executors) one job may have; jobs wider than this fall back to "
                            + "treeAggregate (default: what the switch holds: 256 on the software switch, 32 on the P4 program)")
    int maxWorkersPerJob;

    /** Checks what picocli cannot: the ranges of the service's numbers. */
    void check(final CommandLine cl) {
        if (port < 0 || port > 65535) {
            throw new CommandLine.ParameterException(cl, "--service-port " + port + " is outside 0..65535");
        }
        if (maxWorkersPerJob < 0 || maxWorkersPerJob > Wire.MAX_WORKERS) {
            throw new CommandLine.ParameterException(
                    cl, "--max-workers-per-job " + maxWorkersPerJob + " is outside 1.." + Wire.MAX_WORKERS);
        }
        positive(
                cl,
                "--max-applications",
                maxApplications,
                JobDesk.Options.DEFAULT.quotas().sessions());
        if (maxSessionsPerToken != null) {
            positive(cl, "--max-sessions-per-token", maxSessionsPerToken, Integer.MAX_VALUE);
        }
        positive(cl, "--max-jobs-per-session", maxJobsPerSession, Integer.MAX_VALUE);
        positive(cl, "--max-waiters-per-session", maxWaitersPerSession, Integer.MAX_VALUE);
        positive(cl, "--max-slots-per-job", maxSlotsPerJob, JobSpec.MAX_POOL_SIZE);
        if (tokenSharePercent != null) {
            positive(cl, "--token-share-percent", tokenSharePercent, 100);
        }
        if (maxWorkers < 0) {
            throw new CommandLine.ParameterException(cl, "--max-workers " + maxWorkers + " is negative");
        }
        if (renewIntervalMs < 10 || admissionTimeoutMs < 0 || reserveAfterMs < 0) {
            throw new CommandLine.ParameterException(
                    cl,
                    "--renew-interval-ms " + renewIntervalMs + " (>= 10), "
                            + "--admission-timeout-ms " + admissionTimeoutMs + " and --admission-reserve-after-ms "
                            + reserveAfterMs + " (>= 0) are out of range");
        }
        try {
            quotas(1);
            quotas(2);
        } catch (final IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        // Bad files and names are the user's input too: refused here, before the token file is written.
        resolvable(cl, "--service-host", host);
        try {
            TlsFiles.server(tlsCert, tlsKey, clientCa, host, "the job service on " + host);
            if (Files.exists(tokenFile)) {
                Tenants.read(tokenFile);
            }
        } catch (final RuntimeException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage() != null ? e.getMessage() : rootMessage(e));
        }
    }

    /** Refuses an {@code option} whose {@code host} does not resolve. */
    static void resolvable(final CommandLine cl, final String option, final String host) {
        try {
            InetAddress.getByName(host);
        } catch (final UnknownHostException e) {
            throw new CommandLine.ParameterException(cl, option + " " + host + ": unknown host");
        }
    }

    /** Refuses an {@code option} whose {@code file} is not a readable regular file. */
    static void readable(final CommandLine cl, final String option, final Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new CommandLine.ParameterException(
                    cl, option + " " + file + ": " + (Files.exists(file) ? "not a readable file" : "no such file"));
        }
    }

    /** A usage error as one line on {@code err}: the program, the message, where help is. */
    static int usageError(final String program, final CommandLine.ParameterException e, final PrintStream err) {
        err.println(program + ": " + e.getMessage() + " (" + program + " --help lists the options)");
        return 2;
    }

    /**
     * The quotas the options give for a switch that serves {@code tenants} tokens: the per-token quotas left unset
     * follow {@link Quotas#forTenants} (with one token every application is the same tenant).
     */
    Quotas quotas(final int tenants) {
        final Quotas d = Quotas.DEFAULT.forTenants(tenants);
        return new Quotas(
                maxSlotsPerJob,
                bytes("--max-job-bytes", maxJobBytes),
                maxJobsPerSession,
                maxWaitersPerSession,
                maxSessionsPerToken != null ? maxSessionsPerToken : Math.min(d.sessionsPerToken(), maxApplications),
                maxApplications,
                tokenSharePercent != null ? tokenSharePercent : d.tokenSharePercent(),
                maxWorkers,
                bytes("--max-bytes", maxBytes));
    }

    private static void positive(final CommandLine cl, final String option, final int value, final int most) {
        if (value < 1 || value > most) {
            throw new CommandLine.ParameterException(
                    cl,
                    option + " " + value + " is outside 1.."
                            + (most == Integer.MAX_VALUE ? "" : Integer.toString(most)));
        }
    }

    /** A byte count: digits, optionally followed by k, m or g (powers of 1024). */
    static long bytes(final String option, final String text) {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        final int unit = t.isEmpty() ? -1 : "kmg".indexOf(t.charAt(t.length() - 1));
        final String digits = unit >= 0 ? t.substring(0, t.length() - 1) : t;
        try {
            final long n = Long.parseLong(digits);
            final long v = unit < 0 ? n : Math.multiplyExact(n, 1L << (10 * (unit + 1)));
            if (n < 1) {
                throw new NumberFormatException();
            }
            return v;
        } catch (final NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(
                    option + " '" + text + "' is not a positive byte count " + "(e.g. 33554432, 32m)");
        }
    }

    /** Reads (or creates) the tenants' tokens. */
    Tenants tokens(final PrintStream out, final String program) {
        final boolean existed = tokenFile.toFile().exists();
        final Tenants t = Tenants.readOrCreate(tokenFile);
        if (!existed) {
            out.println(program + ": wrote a new bearer token to " + tokenFile
                    + " (give this file to the applications: spark.switchml.auth.tokenFile)");
        }
        return t;
    }

    /** Starts the job service over {@code controller}; closes the controller when it cannot. */
    JobServiceServer start(
            final SwitchController controller,
            final SwitchDescription description,
            final Tenants tokens,
            final String what) {
        final JobDesk desk;
        try {
            final int most = controller.maxWorkersPerJob();
            if (maxWorkersPerJob < 0 || maxWorkersPerJob > most) {
                throw new IllegalArgumentException(
                        "--max-workers-per-job must be 1.." + most + " on this switch, got " + maxWorkersPerJob);
            }
            desk = new JobDesk(
                    controller,
                    description.withMaxWorkers(maxWorkersPerJob > 0 ? maxWorkersPerJob : most),
                    new JobDesk.Options(renewIntervalMs, admissionTimeoutMs, reserveAfterMs, quotas(tokens.size())),
                    what);
        } catch (final RuntimeException e) {
            controller.close();
            throw e;
        }
        try {
            return JobServiceServer.start(
                    desk,
                    host,
                    port,
                    TlsFiles.server(tlsCert, tlsKey, clientCa, host, "the job service on " + host),
                    tokens);
        } catch (final RuntimeException e) {
            desk.close();
            throw e;
        }
    }

    /** MTU of the interface with {@code host}'s address, 0 when unknown. */
    static int mtuOf(final String host) {
        try {
            final NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(host));
            return nif == null ? 0 : Math.max(0, nif.getMTU());
        } catch (final Exception e) {
            return 0;
        }
    }

    static String rootMessage(final Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }
}

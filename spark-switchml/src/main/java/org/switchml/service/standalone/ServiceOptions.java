package org.switchml.service.standalone;

import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.control.SwitchController;
import org.switchml.protocol.Wire;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceServer;
import org.switchml.service.SwitchDescription;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;

/** The job service's command-line options, shared by both programs, and how they start it. */
final class ServiceOptions {
    /** The job service's conventional port. */
    static final int DEFAULT_PORT = 9560;

    @Option(names = "--service-host", paramLabel = "H",
            description = "address the job service binds (default ${DEFAULT-VALUE}: loopback only; any other address needs --tls-cert and --tls-key)")
    String host = "127.0.0.1";

    @Option(names = "--service-port", paramLabel = "P", description = "job service (gRPC) port, 0 for a free one (default ${DEFAULT-VALUE})")
    int port = DEFAULT_PORT;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "the rack's bearer token, first line; created with a random token (mode 600) when missing (default ${DEFAULT-VALUE})")
    Path tokenFile = Path.of(System.getProperty("user.home"), ".switchml", "token");

    @Option(names = "--tls-cert", paramLabel = "PEM", description = "the service's certificate chain (TLS)")
    String tlsCert = "";

    @Option(names = "--tls-key", paramLabel = "PEM", description = "its PKCS#8 private key")
    String tlsKey = "";

    @Option(names = "--client-ca", paramLabel = "PEM", description = "require client certificates signed by this CA")
    String clientCa = "";

    @Option(names = "--renew-interval-ms", paramLabel = "MS",
            description = "how often drivers renew their lease; a driver that stops renewing loses its jobs within 2.6 intervals (default ${DEFAULT-VALUE})")
    long renewIntervalMs = JobDesk.Options.DEFAULT.renewIntervalMs();

    @Option(names = "--admission-timeout-ms", paramLabel = "MS",
            description = "longest wait of a job request for room on a full switch (default ${DEFAULT-VALUE})")
    long admissionTimeoutMs = JobDesk.Options.DEFAULT.admissionTimeoutMs();

    @Option(names = "--max-applications", paramLabel = "N", description = "sessions at once, 1..128 (default ${DEFAULT-VALUE})")
    int maxApplications = JobDesk.Options.DEFAULT.maxSessions();

    @Option(names = "--max-workers-per-job", paramLabel = "N",
            description = "most workers (executors) one job may have; jobs wider than this fall back to "
                    + "treeAggregate (default: what the switch holds: 256 on the software switch, 32 on the P4 program)")
    int maxWorkersPerJob;

    /** Checks what picocli cannot: the ranges of the service's numbers. */
    void check(final CommandLine cl) {
        if (port < 0 || port > 65535) {
            throw new CommandLine.ParameterException(cl, "--service-port " + port + " is outside 0..65535");
        }
        if (maxWorkersPerJob < 0 || maxWorkersPerJob > Wire.MAX_WORKERS) {
            throw new CommandLine.ParameterException(cl, "--max-workers-per-job " + maxWorkersPerJob
                    + " is outside 1.." + Wire.MAX_WORKERS);
        }
    }

    /** Reads (or creates) the token. */
    BearerToken token(final PrintStream out, final String program) {
        final boolean existed = tokenFile.toFile().exists();
        final BearerToken t = BearerToken.readOrCreate(tokenFile);
        if (!existed) {
            out.println(program + ": wrote a new bearer token to " + tokenFile
                    + " (give this file to the applications: spark.switchml.auth.tokenFile)");
        }
        return t;
    }

    /** Starts the job service over {@code controller}; closes the controller when it cannot. */
    JobServiceServer start(final SwitchController controller, final SwitchDescription description,
                           final BearerToken token, final String what) {
        final JobDesk desk;
        try {
            final int most = controller.maxWorkersPerJob();
            if (maxWorkersPerJob < 0 || maxWorkersPerJob > most) {
                throw new IllegalArgumentException("--max-workers-per-job must be 1.." + most + " on this switch, got "
                        + maxWorkersPerJob);
            }
            desk = new JobDesk(controller, description.withMaxWorkers(maxWorkersPerJob > 0 ? maxWorkersPerJob : most),
                    new JobDesk.Options(renewIntervalMs, admissionTimeoutMs, maxApplications), what);
        } catch (final RuntimeException e) {
            controller.close();
            throw e;
        }
        try {
            return JobServiceServer.start(desk, host, port,
                    TlsFiles.server(tlsCert, tlsKey, clientCa, host, "the job service on " + host), token);
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

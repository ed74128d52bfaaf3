package org.switchml.spark.registrar;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceClient;
import org.switchml.service.LeasedSession;
import org.switchml.service.SwitchTotals;
import org.switchml.spark.config.SwitchMLConfig;

/**
 * Installs jobs through a switch's job service ({@code spark.switchml.jobService.address}): opens a session for
 * this application, renews its lease in the background, and asks for every job in the session's own id range,
 * naming each worker by its IPv4 address (resolved here: the service resolves no names).
 * The session closes (its jobs go at once) when the registrar closes; if the driver dies, the lease lapses and
 * the service removes its jobs.
 */
public final class JobServiceRegistrar implements JobRegistrar {
    private final LeasedSession session;
    private final SwitchAddress address;
    private final long admissionTimeoutMs;

    /**
     * Opens a session with the job service the settings name, with their token and TLS files.
     *
     * @param configured the dataplane address from {@code spark.switchml.switch.address}, or null to use the
     *                   service's
     * @param settings   every Spark setting
     */
    public JobServiceRegistrar(final SwitchAddress configured, final Map<String, String> settings) {
        this(
                clientFor(settings::get),
                application(settings),
                configured,
                SwitchMLConfig.ADMISSION_TIMEOUT.from(settings::get));
    }

    /**
     * Opens a session through {@code client}, which this registrar then owns.
     *
     * @throws org.switchml.service.JobServiceException when the service refuses or cannot be reached
     */
    public JobServiceRegistrar(
            final JobServiceClient client,
            final String application,
            final SwitchAddress configured,
            final long admissionTimeoutMs) {
        this.session = new LeasedSession(client, application);
        this.address = configured != null
                ? configured
                : session.grant().switchDescription().dataplane();
        this.admissionTimeoutMs = admissionTimeoutMs;
    }

    /**
     * A session with the job service at {@code hostPort} (another than {@code spark.switchml.jobService.address},
     * e.g. an extra shard host), with the settings' token and TLS files.
     *
     * @throws org.switchml.service.JobServiceException when the service refuses or cannot be reached
     */
    public static JobServiceRegistrar at(final String hostPort, final Map<String, String> settings) {
        final Function<String, String> s =
                k -> k.equals(SwitchMLConfig.JOB_SERVICE_ADDRESS.key()) ? hostPort : settings.get(k);
        return new JobServiceRegistrar(
                clientFor(s), application(settings), null, SwitchMLConfig.ADMISSION_TIMEOUT.from(settings::get));
    }

    /** A client of the service the settings name. */
    static JobServiceClient clientFor(final Function<String, String> settings) {
        final String at = SwitchMLConfig.JOB_SERVICE_ADDRESS.from(settings);
        final int c = at.lastIndexOf(':');
        final String host = at.substring(0, c);
        final String tokenFile = SwitchMLConfig.AUTH_TOKEN_FILE.from(settings);
        if (tokenFile.isEmpty()) {
            throw new IllegalArgumentException(SwitchMLConfig.JOB_SERVICE_ADDRESS.key() + "=" + at + " names a shared "
                    + "switch, whose job service takes only authenticated calls: set "
                    + SwitchMLConfig.AUTH_TOKEN_FILE.key() + " to the file with the switch's token");
        }
        final BearerToken token = BearerToken.read(Path.of(tokenFile));
        return JobServiceClient.connect(
                host,
                Integer.parseInt(at.substring(c + 1)),
                TlsFiles.client(
                        SwitchMLConfig.TLS_TRUST_CERT.from(settings),
                        SwitchMLConfig.TLS_CERT.from(settings),
                        SwitchMLConfig.TLS_KEY.from(settings),
                        token,
                        host,
                        "the job service at " + at));
    }

    /**
     * The name the service knows this application by: Spark's name and id, without control characters and cut to
     * what the service takes ({@link JobDesk#MAX_NAME_LENGTH}), keeping the id.
     */
    static String application(final Map<String, String> settings) {
        final String name =
                settings.getOrDefault("spark.app.name", "spark application").replaceAll("\\p{Cc}", " ");
        final String id = settings.getOrDefault("spark.app.id", "").replaceAll("\\p{Cc}", " ");
        final String suffix = id.isEmpty() ? "" : " (" + id + ")";
        final int room = JobDesk.MAX_NAME_LENGTH - suffix.length();
        if (room < 1) {
            return (name + suffix).substring(0, JobDesk.MAX_NAME_LENGTH);
        }
        return (name.length() > room ? name.substring(0, Math.max(0, room - 3)) + "..." : name) + suffix;
    }

    /** The session's lease, job ids and switch. */
    public JobDesk.Grant grant() {
        return session.grant();
    }

    /** The switch's traffic summed over every job, as its service reports it. */
    public SwitchTotals switchTotals() {
        return session.switchTotals();
    }

    @Override
    public SwitchAddress address() {
        return address;
    }

    @Override
    public JobIds jobIds() {
        return new JobIds(grant().jobIdBase(), grant().jobIdCount());
    }

    @Override
    public JobSpec register(final JobSpec spec) {
        return session.create(spec, admissionTimeoutMs);
    }

    @Override
    public void remove(final int jobId) {
        session.remove(jobId);
    }

    @Override
    public int requiredK() {
        return grant().switchDescription().requiredK();
    }

    @Override
    public int maxWorkers() {
        final int n = grant().switchDescription().maxWorkers();
        return n > 0 ? n : Wire.P4_MAX_WORKERS; // a service that does not say holds what every target holds
    }

    @Override
    public int dataplaneMtu() {
        return grant().switchDescription().mtu();
    }

    @Override
    public boolean countsJobs() {
        return grant().switchDescription().countsJobs();
    }

    @Override
    public Optional<JobCounters> counters(final int jobId) {
        return countsJobs() ? session.counters(jobId) : Optional.empty();
    }

    @Override
    public boolean reachable() {
        return session.lostReason() == null;
    }

    /** Closes the session (the service removes its jobs at once) and the connection. */
    @Override
    public void close() {
        session.close();
    }
}

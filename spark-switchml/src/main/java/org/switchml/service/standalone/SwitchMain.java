package org.switchml.service.standalone;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.switchml.auth.BearerToken;
import org.switchml.auth.Tenants;
import org.switchml.auth.TlsFiles;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.protocol.Wire;
import org.switchml.service.JobServiceServer;
import org.switchml.service.stack.SwitchStack;
import org.switchml.transport.FaultPlan;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The standalone software switch ({@code bin/switchml-switch}): the dataplane lanes, the controller that owns
 * them (in this JVM), and the job service applications ask for jobs. Runs until killed.
 *
 * <p>Bad input (a bad option or value, an unknown host, unreadable TLS or token files, a token file others may
 * read) prints one line naming it and exits 2, before the token file is written; a switch that cannot start (a
 * port in use) prints one line naming what failed and exits 1. Once serving it prints one line
 * {@code switchml-switch: dataplane HOST:PORT[,PORT...] jobs HOST:PORT token FILE p4runtime off|HOST:PORT}.
 */
@Command(
        name = SwitchMain.NAME,
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "The standalone SwitchML software switch: dataplane lanes, their controller and the job "
                + "service that Spark drivers (spark.switchml.jobService.address) ask for jobs.")
public final class SwitchMain {
    static final String NAME = "switchml-switch";

    @Option(
            names = "--host",
            paramLabel = "H",
            description = "address the dataplane lanes bind (default ${DEFAULT-VALUE})")
    String host = "127.0.0.1";

    @Option(
            names = "--port",
            paramLabel = "P",
            description = "UDP port of lane 0; lane i listens on P+i; 0 picks free ports (default ${DEFAULT-VALUE})")
    int port = Wire.DEFAULT_PORT;

    @Option(
            names = "--lanes",
            paramLabel = "L",
            description = "lanes, one dataplane thread each, 1..16 (default ${DEFAULT-VALUE})")
    int lanes = 2;

    @Mixin
    ServiceOptions service = new ServiceOptions();

    @Option(
            names = "--p4runtime-port",
            paramLabel = "P|off",
            description =
                    "also serve P4Runtime on this port, for operators only (0: a free one; default ${DEFAULT-VALUE}); needs --p4runtime-token-file")
    String p4runtimePort = "off";

    @Option(
            names = "--p4runtime-host",
            paramLabel = "H",
            description = "address the P4Runtime server binds (default ${DEFAULT-VALUE})")
    String p4runtimeHost = "127.0.0.1";

    @Option(
            names = "--p4runtime-token-file",
            paramLabel = "FILE",
            description =
                    "operators' bearer token for P4Runtime; never an application's token (their P4Runtime reads would show every job's secret): the switch refuses to start when it is one")
    Path p4runtimeTokenFile;

    @Option(
            names = "--p4runtime-writes",
            description =
                    "let operators write through the P4Runtime port: the switch's own controller then arbitrates with election id 1, so an operator with a higher one can take primary (and every job's writes fail until it leaves). Off: the port refuses Write and SetForwardingPipelineConfig, and the controller holds the highest election id")
    boolean p4runtimeWrites;

    @Option(names = "--device-id", paramLabel = "D", description = "P4Runtime device id (default ${DEFAULT-VALUE})")
    long deviceId;

    private SwitchMain() {}

    public static void main(final String[] args) throws InterruptedException {
        final int code = run(args, System.out, System.err);
        if (code >= 0) {
            System.exit(code);
        }
    }

    /**
     * Starts the switch and blocks until the JVM shuts down; returns an exit code without serving when the
     * command line is bad (2), help was asked for (0), or the switch could not start (1).
     */
    static int run(final String[] args, final PrintStream out, final PrintStream err) throws InterruptedException {
        final SwitchMain o = new SwitchMain();
        final CommandLine cl = new CommandLine(o);
        try {
            o.parse(cl, args);
        } catch (final CommandLine.ParameterException e) {
            return ServiceOptions.usageError(NAME, e, err);
        }
        if (cl.isUsageHelpRequested() || cl.isVersionHelpRequested()) {
            cl.usage(new PrintWriter(out, true));
            return 0;
        }
        final Running r;
        try {
            r = o.start(out);
        } catch (final RuntimeException e) {
            err.println(NAME + ": " + (e.getMessage() != null ? e.getMessage() : ServiceOptions.rootMessage(e)));
            return 1;
        }
        out.println(NAME + ": dataplane " + r.sw().address() + " jobs " + r.serviceAddress()
                + " token " + o.service.tokenFile + " p4runtime "
                + (r.p4runtime().port() < 0
                        ? "off"
                        : o.p4runtimeHost + ":" + r.p4runtime().port()));
        out.flush();
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            r.close();
                            stopped.countDown();
                        },
                        "switchml-shutdown"));
        stopped.await();
        return -1;
    }

    /** Fills the options from {@code args} and checks what picocli cannot. */
    private void parse(final CommandLine cl, final String[] args) {
        cl.parseArgs(args);
        if (lanes < 1 || lanes > 16) {
            throw new CommandLine.ParameterException(cl, "--lanes " + lanes + " is outside 1..16");
        }
        if (port < 0 || port > 65535 || (port != 0 && port + lanes - 1 > 65535)) {
            throw new CommandLine.ParameterException(
                    cl, "--port " + port + " with --lanes " + lanes + " is outside 0..65535");
        }
        ServiceOptions.resolvable(cl, "--host", host);
        service.check(cl);
        if (!p4runtimePort.equals("off")) {
            final int p;
            try {
                p = Integer.parseInt(p4runtimePort);
            } catch (final NumberFormatException e) {
                throw new CommandLine.ParameterException(
                        cl, "--p4runtime-port '" + p4runtimePort + "' is neither a port nor off");
            }
            if (p < 0 || p > 65535) {
                throw new CommandLine.ParameterException(cl, "--p4runtime-port " + p + " is outside 0..65535");
            }
            if (p4runtimeTokenFile == null) {
                throw new CommandLine.ParameterException(
                        cl,
                        "--p4runtime-port needs --p4runtime-token-file (the "
                                + "operators' token, not the applications')");
            }
            ServiceOptions.resolvable(cl, "--p4runtime-host", p4runtimeHost);
            try {
                TlsFiles.server(
                        service.tlsCert,
                        service.tlsKey,
                        service.clientCa,
                        p4runtimeHost,
                        "the P4Runtime server on " + p4runtimeHost);
                final BearerToken operators = BearerToken.read(p4runtimeTokenFile);
                if (Files.exists(service.tokenFile)
                        && Tenants.read(service.tokenFile).contains(operators)) {
                    throw new IllegalArgumentException(operatorsTokenClash());
                }
            } catch (final RuntimeException e) {
                throw new CommandLine.ParameterException(
                        cl, e.getMessage() != null ? e.getMessage() : ServiceOptions.rootMessage(e));
            }
        } else if (p4runtimeWrites) {
            throw new CommandLine.ParameterException(cl, "--p4runtime-writes needs --p4runtime-port");
        }
    }

    /**
     * Starts a switch in this JVM from a command line, as {@code bin/switchml-switch} would (tests, embedding).
     *
     * @throws IllegalArgumentException on a usage error
     * @throws RuntimeException         when it cannot start
     */
    public static Running start(final PrintStream out, final String... args) {
        final SwitchMain o = new SwitchMain();
        try {
            o.parse(new CommandLine(o), args);
        } catch (final CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        return o.start(out);
    }

    /**
     * A started switch: its stack (dataplane, P4Runtime server, controller, job service).
     *
     * @param stack       the switch and what owns it
     * @param serviceHost the address the job service binds
     * @param tokenFile   the applications' token
     */
    public record Running(SwitchStack stack, String serviceHost, Path tokenFile) implements AutoCloseable {

        /** The dataplane. */
        public SoftwareSwitch sw() {
            return stack.softwareSwitch();
        }

        /** Its P4Runtime server (in process only unless asked). */
        public SwitchRuntimeServer p4runtime() {
            return stack.p4runtime();
        }

        /** The job service. */
        public JobServiceServer jobs() {
            return stack.service();
        }

        /** The job service's address, {@code host:port}. */
        public String serviceAddress() {
            return serviceHost + ":" + jobs().port();
        }

        @Override
        public void close() {
            stack.close();
        }
    }

    private String operatorsTokenClash() {
        return "--p4runtime-token-file " + p4runtimeTokenFile + " holds an application token of --token-file "
                + service.tokenFile + ": P4Runtime reads show every job's secret, so the operators' token must be one "
                + "no application holds";
    }

    /** Starts what the options describe (checked by {@link #parse}); errors name the host and port that failed. */
    Running start(final PrintStream out) {
        final Tenants tokens = service.tokens(out, NAME);
        final List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            ports.add(port == 0 ? 0 : port + i);
        }
        final SoftwareSwitch sw;
        try {
            sw = SoftwareSwitch.start(new SwitchOptions(host, ports, false, FaultPlan.NONE));
        } catch (final RuntimeException e) {
            throw new IllegalStateException(
                    "cannot bind the dataplane on " + host + " UDP "
                            + (port == 0 ? "free ports" : "ports " + port + ".." + (port + lanes - 1))
                            + ": " + ServiceOptions.rootMessage(e),
                    e);
        }
        final SwitchStack stack = SwitchStack.start(
                sw,
                true,
                dataplane -> {
                    if (p4runtimePort.equals("off")) {
                        return SwitchRuntimeServer.startInProcess(dataplane);
                    }
                    final BearerToken operators = BearerToken.read(p4runtimeTokenFile);
                    if (tokens.contains(operators)) {
                        throw new IllegalStateException(operatorsTokenClash());
                    }
                    return SwitchRuntimeServer.start(
                            dataplane,
                            p4runtimeHost,
                            Integer.parseInt(p4runtimePort),
                            deviceId,
                            TlsFiles.server(
                                    service.tlsCert,
                                    service.tlsKey,
                                    service.clientCa,
                                    p4runtimeHost,
                                    "the P4Runtime server on " + p4runtimeHost),
                            operators.interceptor("the P4Runtime server of switch " + dataplane.address()),
                            p4runtimeWrites);
                },
                // Read-only, the controller holds the highest election id: by P4Runtime's arbitration no one else can
                // be primary. With writes on, an operator's controller with a higher id may take over.
                own -> p4runtimeWrites ? own : own.withHighestElectionId(),
                ServiceOptions.mtuOf(host),
                (controller, d) -> service.start(controller, d, tokens, "switch " + sw.address()));
        return new Running(stack, service.host, service.tokenFile);
    }
}

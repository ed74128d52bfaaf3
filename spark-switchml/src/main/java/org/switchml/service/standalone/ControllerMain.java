package org.switchml.service.standalone;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.switchml.auth.Tenants;
import org.switchml.control.ControllerOptions;
import org.switchml.control.HostTable;
import org.switchml.control.PipelineConfig;
import org.switchml.control.SwitchController;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.Wire;
import org.switchml.service.JobServiceServer;
import org.switchml.service.SwitchDescription;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The controller and job service beside a P4 switch running p4/switchml.p4 ({@code bin/switchml-controller}):
 * it becomes the switch's P4Runtime primary, pushes the program, and keeps the role while it runs, so Spark
 * drivers ask it for jobs instead of speaking P4Runtime themselves. It arbitrates with the highest election id
 * there is, as the standalone switch's own controller does, so by P4Runtime's arbitration no other client can
 * become primary and change the switch under the jobs (one with the same id is refused as in use); an operator
 * who means another controller to take over gives {@code --election-id}. Exit codes as {@link SwitchMain}'s.
 */
@Command(
        name = ControllerMain.NAME,
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = "Owns a P4 switch running p4/switchml.p4 (e.g. BMv2's simple_switch_grpc) and serves the job "
                + "service that Spark drivers (spark.switchml.jobService.address) ask for jobs.")
public final class ControllerMain {
    static final String NAME = "switchml-controller";

    @Option(
            names = "--p4runtime",
            paramLabel = "H:P",
            description =
                    "the switch's P4Runtime server; keep it on loopback or a management network only this controller reaches (default ${DEFAULT-VALUE})")
    String p4runtime = "127.0.0.1:9559";

    @Option(names = "--device-id", paramLabel = "D", description = "P4Runtime device id (default ${DEFAULT-VALUE})")
    long deviceId;

    @Option(
            names = "--election-id",
            paramLabel = "E",
            description = "P4Runtime election id, 1 to 2^63-1; by default the highest there is (2^128-1), so no other "
                    + "client can become primary. With a lower one, a client with a higher id takes the primary role "
                    + "and every job's installs fail until it leaves")
    Long electionId;

    @Option(
            names = "--p4-json",
            paramLabel = "FILE",
            required = true,
            description =
                    "the BMv2 JSON p4c compiled from p4/switchml.p4 (p4/compile.sh writes p4/build/switchml.json)")
    Path p4Json;

    @Option(
            names = "--hosts",
            paramLabel = "FILE",
            required = true,
            description = "the switch's host table: one line 'IPv4 SWITCH_PORT MAC' per host on its data ports")
    Path hosts;

    @Option(
            names = "--dataplane",
            paramLabel = "H:P[,P...]",
            required = true,
            description = "the switch's dataplane address as workers reach it (one UDP port per lane)")
    String dataplane;

    @Option(
            names = "--mtu",
            paramLabel = "BYTES",
            description = "MTU of the switch's data ports, 0 when unknown (default ${DEFAULT-VALUE})")
    int mtu;

    @Mixin
    ServiceOptions service = new ServiceOptions();

    ControllerMain() {}

    public static void main(final String[] args) throws InterruptedException {
        final int code = run(args, System.out, System.err);
        if (code >= 0) {
            System.exit(code);
        }
    }

    /** Serves until the JVM shuts down; returns an exit code when it does not serve (as {@link SwitchMain#run}). */
    static int run(final String[] args, final PrintStream out, final PrintStream err) throws InterruptedException {
        final ControllerMain o = new ControllerMain();
        final CommandLine cl = new CommandLine(o);
        final SwitchAddress address;
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested() || cl.isVersionHelpRequested()) {
                cl.usage(new PrintWriter(out, true));
                return 0;
            }
            if (o.electionId != null && o.electionId < 1) {
                throw new CommandLine.ParameterException(
                        cl,
                        "--election-id " + o.electionId
                                + ": an election id is 1 to 2^63-1 (omit it for the highest there is)");
            }
            try {
                address = SwitchAddress.parse(o.dataplane);
            } catch (final IllegalArgumentException e) {
                throw new CommandLine.ParameterException(cl, "--dataplane " + o.dataplane + ": " + e.getMessage());
            }
            ServiceOptions.readable(cl, "--p4-json", o.p4Json);
            ServiceOptions.readable(cl, "--hosts", o.hosts);
            o.service.check(cl);
        } catch (final CommandLine.ParameterException e) {
            return ServiceOptions.usageError(NAME, e, err);
        }
        final JobServiceServer server;
        try {
            server = o.start(address, out);
        } catch (final RuntimeException e) {
            err.println(NAME + ": " + (e.getMessage() != null ? e.getMessage() : ServiceOptions.rootMessage(e)));
            return 1;
        }
        out.println(NAME + ": switch " + o.p4runtime + " device " + o.deviceId + " dataplane " + address + " jobs "
                + o.service.host + ":" + server.port() + " token " + o.service.tokenFile);
        out.flush();
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            stopped.countDown();
                        },
                        "switchml-shutdown"));
        stopped.await();
        return -1;
    }

    JobServiceServer start(final SwitchAddress address, final PrintStream out) {
        final Tenants tokens = service.tokens(out, NAME);
        final HostTable table = HostTable.read(hosts);
        final PipelineConfig pipeline = PipelineConfig.bmv2(p4Json);
        final SwitchController controller = SwitchController.connect(controllerOptions(table));
        try {
            controller.setPipeline(pipeline);
        } catch (final RuntimeException e) {
            controller.close();
            throw new IllegalStateException("cannot push p4/switchml.p4 to " + p4runtime + ": " + e.getMessage(), e);
        }
        final SwitchDescription d = new SwitchDescription(
                address,
                Wire.P4_K,
                mtu,
                false,
                controller.poolSlots(),
                controller.jobIndices(),
                controller.maxWorkersPerJob());
        return service.start(controller, d, tokens, "switch " + address);
    }

    /** How the controller connects to the target: the highest election id unless {@code --election-id} says. */
    ControllerOptions controllerOptions(final HostTable table) {
        final ControllerOptions o =
                ControllerOptions.of(p4runtime).withDeviceId(deviceId).withHosts(table);
        return electionId == null ? o.withHighestElectionId() : o.withElectionId(electionId);
    }
}

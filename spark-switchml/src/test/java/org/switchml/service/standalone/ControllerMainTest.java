package org.switchml.service.standalone;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.client.ClientOptions;
import org.switchml.client.SwitchMLClient;
import org.switchml.control.ControllerOptions;
import org.switchml.control.HostTable;
import org.switchml.control.SwitchControlException;
import org.switchml.control.SwitchController;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import org.switchml.service.JobDesk;
import org.switchml.service.JobServiceClient;
import org.switchml.service.JobServiceException;
import org.switchml.service.JobServiceServer;
import picocli.CommandLine;

/**
 * The controller beside a P4 target, against the software switch's P4Runtime server (which takes a BMv2
 * pipeline and ignores its JSON): it pushes the BMv2 pipeline, so its service asks for k = 64 and finds every
 * worker in the host table; Bmv2SparkIT runs it against BMv2 itself.
 */
@Timeout(120)
class ControllerMainTest {
    @TempDir
    Path dir;

    @Test
    void itOwnsTheTargetAndItsServiceInstallsBmv2JobsFromTheHostTable() throws Exception {
        final Path json = Files.writeString(dir.resolve("switchml.json"), "{}");
        final Path hosts =
                Files.writeString(dir.resolve("hosts"), "# the test's worker\n127.0.0.1 7 02:00:00:00:00:07\n");
        final Path token = dir.resolve("token");
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer p4 = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
                SwitchMLClient worker = SwitchMLClient.open(ClientOptions.defaults())) {
            final ControllerMain o = new ControllerMain();
            new CommandLine(o)
                    .parseArgs(
                            "--p4runtime",
                            "127.0.0.1:" + p4.port(),
                            "--p4-json",
                            json.toString(),
                            "--hosts",
                            hosts.toString(),
                            "--dataplane",
                            sw.address().toString(),
                            "--service-port",
                            "0",
                            "--token-file",
                            token.toString());
            try (JobServiceServer server = o.start(sw.address(), new PrintStream(new ByteArrayOutputStream()));
                    JobServiceClient c = JobServiceClient.connect(
                            "127.0.0.1",
                            server.port(),
                            TlsFiles.client("", "", "", BearerToken.read(token), "127.0.0.1", "the controller"))) {
                final JobDesk.Grant g = c.open("bmv2 app");
                assertEquals(Wire.P4_K, g.switchDescription().requiredK());
                assertEquals(sw.address(), g.switchDescription().dataplane());
                final JobSpec spec = c.create(
                        g.sessionId(),
                        new JobSpec(g.jobIdBase(), 1, 0, Wire.P4_K, 4, List.of(worker.localAddress())),
                        0);
                assertArrayEquals(
                        new int[] {5, -6, 7}, worker.join(spec, 0, sw.address()).allReduce(new int[] {5, -6, 7}));
                final JobServiceException notInTable = assertThrows(
                        JobServiceException.class,
                        () -> c.create(
                                g.sessionId(),
                                new JobSpec(
                                        g.jobIdBase() + 1,
                                        1,
                                        0,
                                        Wire.P4_K,
                                        4,
                                        List.of(new InetSocketAddress("127.0.0.2", 9))),
                                0));
                assertTrue(
                        notInTable.getMessage().contains("127.0.0.2")
                                && notInTable.getMessage().contains("host table"),
                        notInTable.getMessage());
                final JobServiceException wrongK = assertThrows(
                        JobServiceException.class,
                        () -> c.create(
                                g.sessionId(),
                                new JobSpec(g.jobIdBase() + 2, 1, 0, 128, 4, List.of(worker.localAddress())),
                                0));
                assertTrue(wrongK.getMessage().contains("k = 64"), wrongK.getMessage());
                assertEquals(Wire.P4_MAX_WORKERS, g.switchDescription().maxWorkers(), "the P4 program's bitmap");
                final List<InetSocketAddress> wide = new ArrayList<>();
                for (int r = 0; r <= Wire.P4_MAX_WORKERS; r++) {
                    wide.add(new InetSocketAddress("127.0.0.1", 20_000 + r)); // all in the host table
                }
                final JobServiceException tooWide = assertThrows(
                        JobServiceException.class,
                        () -> c.create(g.sessionId(), new JobSpec(g.jobIdBase() + 3, 1, 0, Wire.P4_K, 4, wide), 0));
                assertTrue(
                        tooWide.getMessage().contains("33 workers")
                                && tooWide.getMessage().contains("at most 32"),
                        tooWide.getMessage());
                assertEquals(1, c.close(g.sessionId()));
            }
        }
    }

    /**
     * The controller holds the primary role with the highest election id there is, as the standalone switch's own
     * controller does: a second controller with the highest id below it is a backup (refused as not primary), one
     * with the same id is refused as in use, and the service goes on installing jobs. Control: started with
     * {@code --election-id 1}, the same second controller takes the primary role, and then the service cannot
     * install a job. Against the software switch's P4Runtime server, which arbitrates as P4Runtime defines (BMv2
     * itself is not needed for arbitration; Bmv2SparkIT runs the controller against BMv2).
     */
    @Test
    void itHoldsPrimaryWithTheHighestElectionIdSoNoOtherControllerTakesIt() throws Exception {
        final Path json = Files.writeString(dir.resolve("switchml.json"), "{}");
        final Path hosts = Files.writeString(dir.resolve("hosts"), "127.0.0.1 7 02:00:00:00:00:07\n");
        for (final boolean control : new boolean[] {false, true}) {
            final Path token = dir.resolve("token-" + control);
            try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                    SwitchRuntimeServer p4 = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
                    SwitchMLClient worker = SwitchMLClient.open(ClientOptions.defaults())) {
                final ControllerMain o = new ControllerMain();
                final List<String> args = new ArrayList<>(List.of(
                        "--p4runtime",
                        "127.0.0.1:" + p4.port(),
                        "--p4-json",
                        json.toString(),
                        "--hosts",
                        hosts.toString(),
                        "--dataplane",
                        sw.address().toString(),
                        "--service-port",
                        "0",
                        "--token-file",
                        token.toString()));
                if (control) {
                    args.addAll(List.of("--election-id", "1"));
                }
                new CommandLine(o).parseArgs(args.toArray(new String[0]));
                final ControllerOptions second = ControllerOptions.of("127.0.0.1", p4.port());
                try (JobServiceServer server = o.start(sw.address(), new PrintStream(new ByteArrayOutputStream()));
                        JobServiceClient c = JobServiceClient.connect(
                                "127.0.0.1",
                                server.port(),
                                TlsFiles.client("", "", "", BearerToken.read(token), "127.0.0.1", "the controller"))) {
                    final JobDesk.Grant g = c.open("primary " + control);
                    final JobSpec job = new JobSpec(g.jobIdBase(), 1, 0, Wire.P4_K, 4, List.of(worker.localAddress()));
                    if (!control) {
                        final SwitchControlException below = assertThrows(
                                SwitchControlException.class,
                                () -> SwitchController.connect(second.withElectionId(-1L))
                                        .close()); // 2^64 - 1
                        assertEquals(Status.Code.PERMISSION_DENIED, below.code(), below.getMessage());
                        final SwitchControlException same = assertThrows(
                                SwitchControlException.class,
                                () -> SwitchController.connect(second.withHighestElectionId())
                                        .close());
                        assertEquals(Status.Code.INVALID_ARGUMENT, same.code(), same.getMessage());
                        assertEquals(
                                ControllerOptions.of("h:1")
                                        .withHighestElectionId()
                                        .electionIdText(),
                                o.controllerOptions(HostTable.empty()).electionIdText());
                        final JobSpec spec = c.create(g.sessionId(), job, 0);
                        assertArrayEquals(
                                new int[] {3, -4},
                                worker.join(spec, 0, sw.address()).allReduce(new int[] {3, -4}));
                    } else {
                        try (SwitchController operator = SwitchController.connect(second.withElectionId(2))) {
                            assertTrue(operator.isPrimary(), "election id 2 took the primary role from 1");
                            final JobServiceException refused =
                                    assertThrows(JobServiceException.class, () -> c.create(g.sessionId(), job, 0));
                            assertTrue(refused.getMessage().contains("no longer primary"), refused.getMessage());
                        }
                    }
                }
            }
        }
    }

    @Test
    void usageErrorsExitTwoAndAnUnreachableTargetExitsOneNamingIt() throws Exception {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertEquals(
                2,
                ControllerMain.run(
                        new String[] {"--hosts", "h", "--dataplane", "127.0.0.1:1"},
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--p4-json"), err.toString(StandardCharsets.UTF_8));
        final ByteArrayOutputStream zero = new ByteArrayOutputStream();
        assertEquals(
                2,
                ControllerMain.run(
                        new String[] {
                            "--p4-json", "j", "--hosts", "h", "--dataplane", "127.0.0.1:1", "--election-id", "0"
                        },
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(zero, true, StandardCharsets.UTF_8)));
        assertTrue(
                zero.toString(StandardCharsets.UTF_8).contains("--election-id 0"),
                zero.toString(StandardCharsets.UTF_8));
        final ByteArrayOutputStream noFile = new ByteArrayOutputStream();
        final Path json = Files.writeString(dir.resolve("p4.json"), "{}");
        final Path token = dir.resolve("never-written");
        assertEquals(
                2,
                ControllerMain.run(
                        new String[] {
                            "--p4-json",
                            json.toString(),
                            "--hosts",
                            dir.resolve("no-hosts").toString(),
                            "--dataplane",
                            "127.0.0.1:1",
                            "--token-file",
                            token.toString()
                        },
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(noFile, true, StandardCharsets.UTF_8)));
        assertEquals(
                "switchml-controller: --hosts " + dir.resolve("no-hosts") + ": no such file "
                        + "(switchml-controller --help lists the options)",
                noFile.toString(StandardCharsets.UTF_8).trim());
        assertFalse(Files.exists(token), "a refused start wrote the token file");
        final int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        final Path hosts = Files.writeString(dir.resolve("hosts"), "127.0.0.1 7 02:00:00:00:00:07\n");
        final ByteArrayOutputStream err2 = new ByteArrayOutputStream();
        assertEquals(
                1,
                ControllerMain.run(
                        new String[] {
                            "--p4runtime",
                            "127.0.0.1:" + dead,
                            "--p4-json",
                            Files.writeString(dir.resolve("j.json"), "{}").toString(),
                            "--hosts",
                            hosts.toString(),
                            "--dataplane",
                            "127.0.0.1:48864",
                            "--token-file",
                            dir.resolve("t").toString(),
                            "--service-port",
                            "0"
                        },
                        new PrintStream(new ByteArrayOutputStream()),
                        new PrintStream(err2, true, StandardCharsets.UTF_8)));
        assertTrue(
                err2.toString(StandardCharsets.UTF_8).contains("127.0.0.1:" + dead),
                err2.toString(StandardCharsets.UTF_8));
    }
}

package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.client.ClientOptions;
import picocli.CommandLine;

/** The roles' option checks, which reject bad values before any socket is opened or with the job's first line. */
class RackAllReduceOptionsTest {
    private static final String[] WORKER = {
        "--role", "worker", "--rank", "0", "--coordinator", "127.0.0.1:1", "--switch", "127.0.0.1:2"
    };

    private static String[] worker(final String... more) {
        final String[] all = new String[WORKER.length + more.length];
        System.arraycopy(WORKER, 0, all, 0, WORKER.length);
        System.arraycopy(more, 0, all, WORKER.length, more.length);
        return all;
    }

    /** Exit code and standard error of one command line. */
    private record Run(int code, String err) {}

    private static Run run(final String... args) {
        final StringWriter err = new StringWriter();
        final CommandLine cl = new CommandLine(new RackAllReduce()).setErr(new PrintWriter(err, true));
        return new Run(cl.execute(args), err.toString());
    }

    @Test
    void aRetransmissionTimeoutBelowOneMillisecondIsAUsageError() {
        final Run r = run(worker("--retransmit-timeout-ms", "0"));
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--retransmit-timeout-ms must be positive"), r.err());
    }

    @Test
    void theFirstRetransmissionTimeoutIsParsedAndDefaultsToTheLibrarys() {
        final RackAllReduce dflt = new RackAllReduce();
        new CommandLine(dflt).parseArgs(WORKER);
        assertEquals(ClientOptions.DEFAULT_RETRANSMIT_TIMEOUT_MS, dflt.retransmitTimeoutMs);
        final RackAllReduce set = new RackAllReduce();
        new CommandLine(set).parseArgs(worker("--retransmit-timeout-ms", "200"));
        assertEquals(200, set.retransmitTimeoutMs);
    }

    @Test
    void aNegativeWarmUpIsAUsageErrorOfTheCoordinator() {
        // The old names stay as aliases of the documented ones.
        for (final String flag : new String[] {"--warm-up", "--warm-up-max-s", "--warmups", "--warmup-max-s"}) {
            final Run r = run("--role", "coordinator", "--workers", "2", flag, "-1");
            assertEquals(2, r.code(), flag);
            assertTrue(r.err().contains("--warm-up and --warm-up-max-s must not be negative"), r.err());
        }
    }

    @Test
    void aWorkerWithoutTheCoordinatorOrWithBadShardLanesIsAUsageError() {
        final Run none = run("--role", "worker", "--rank", "0");
        assertEquals(2, none.code());
        assertTrue(none.err().contains("--coordinator"), none.err());
        final Run lanes = run(worker("--shard-lanes", "17"));
        assertEquals(2, lanes.code());
        assertTrue(lanes.err().contains("--shard-lanes must be 0..16"), lanes.err());
    }

    @Test
    void extraShardsNeedTheShardedJob() {
        final Run r = run("--role", "coordinator", "--workers", "2", "--extra-shard", "127.0.0.1:9560");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--extra-shard needs --sharded"), r.err());
    }

    /**
     * A worker without --switch may take part in a sharded job; when its coordinator hands it a job on a switch,
     * it answers with a usage error naming --switch (a coordinator of this test's own, on a free port).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aWorkerGivenAJobOnASwitchWithoutTheSwitchIsAUsageError() throws Exception {
        try (ServerSocket coordinator = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            coordinator.setSoTimeout(30_000);
            final CompletableFuture<Run> worker = CompletableFuture.supplyAsync(() -> run(
                    "--role",
                    "worker",
                    "--rank",
                    "0",
                    "--coordinator",
                    "127.0.0.1:" + coordinator.getLocalPort(),
                    "--timeout-s",
                    "30"));
            try (Socket s = coordinator.accept()) {
                s.setSoTimeout(30_000);
                final BufferedReader in =
                        new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
                final String hello = in.readLine();
                assertTrue(hello != null && hello.startsWith("HELLO 0 127.0.0.1 "), "hello: " + hello);
                final String[] f = hello.split(" ");
                s.getOutputStream()
                        .write(("JOB 7 0 42 64 4 127.0.0.1:" + f[3] + "\n").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                final Run r = worker.get(30, TimeUnit.SECONDS);
                assertEquals(2, r.code(), r.err());
                assertTrue(r.err().contains("--switch"), r.err());
            }
        }
    }
}

package org.switchml.examples;

import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The worker's option checks, which reject bad values before any socket is opened. */
class RackAllReduceOptionsTest {
    private static final String[] WORKER = {"--role", "worker", "--rank", "0", "--coordinator", "127.0.0.1:1",
        "--switch", "127.0.0.1:2"};

    private static String[] worker(final String... more) {
        final String[] all = new String[WORKER.length + more.length];
        System.arraycopy(WORKER, 0, all, 0, WORKER.length);
        System.arraycopy(more, 0, all, WORKER.length, more.length);
        return all;
    }

    /** Exit code and standard error of one command line. */
    private record Run(int code, String err) {
    }

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
        for (final String flag : new String[] {"--warmups", "--warmup-max-s"}) {
            final Run r = run("--role", "coordinator", "--workers", "2", flag, "-1");
            assertEquals(2, r.code(), flag);
            assertTrue(r.err().contains("--warmups and --warmup-max-s must not be negative"), r.err());
        }
    }

    @Test
    void aWorkerWithoutTheSwitchIsAUsageError() {
        final Run r = run("--role", "worker", "--rank", "0", "--coordinator", "127.0.0.1:1");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--switch"), r.err());
    }
}

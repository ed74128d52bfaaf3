package org.switchml.dataplane.runtime;

import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import org.switchml.transport.FaultPlan;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The standalone software switch: the dataplane lanes and, beside them, the P4Runtime server that
 * programs them ({@code bin/switchml-switch}). Runs until killed.
 *
 * <p>Usage errors print one line and exit 2; a switch that cannot start (port in use, unknown host)
 * prints one line naming what failed and exits 1. Once serving it prints one line
 * {@code switchml-switch: dataplane HOST:PORT[,PORT...] p4runtime HOST:PORT device D}.
 */
public final class SwitchMain {
    static final String NAME = "switchml-switch";
    static final String USAGE = "usage: " + NAME + " [--host H] [--port P] [--lanes L] [--p4runtime-host H]"
            + " [--p4runtime-port P|off] [--device-id D] [--job ID:GEN:K:POOL:HOST:PORT,HOST:PORT...]...";
    private static final String HELP = USAGE + "\n\n"
            + "  --host H            address the dataplane lanes bind (default 127.0.0.1)\n"
            + "  --port P            UDP port of lane 0; lane i listens on P+i; 0 picks free ports (default "
            + Wire.DEFAULT_PORT + ")\n"
            + "  --lanes L           lanes, one dataplane thread each, 1..16 (default 2)\n"
            + "  --p4runtime-host H  address the P4Runtime server binds (default 127.0.0.1: loopback only)\n"
            + "  --p4runtime-port P  P4Runtime (gRPC) port, 0 for a free one, off for none (default "
            + SwitchRuntimeServer.DEFAULT_PORT + ")\n"
            + "  --device-id D       P4Runtime device id (default 0)\n"
            + "  --job SPEC          install a job at start, without a controller; the order of the worker\n"
            + "                      endpoints gives the ranks (repeatable). Its secret is drawn at random and\n"
            + "                      printed: the workers' JobSpec needs it\n"
            + "  --help              this text\n";

    private SwitchMain() {
    }

    /** Parsed command line. */
    record Options(String host, int port, int lanes, String p4runtimeHost, int p4runtimePort, long deviceId,
                   List<JobSpec> jobs) {
    }

    /** A usage error: the message names the option and the bad value. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(final String message) {
            super(message);
        }
    }

    public static void main(final String[] args) throws InterruptedException {
        final int code = run(args, System.out, System.err);
        if (code >= 0) {
            System.exit(code);
        }
    }

    /**
     * Starts the switch and blocks until the JVM shuts down; returns an exit code without serving when the
     * command line is bad, help was asked for, or the switch could not start.
     */
    static int run(final String[] args, final PrintStream out, final PrintStream err) throws InterruptedException {
        final Options o;
        try {
            o = parse(args);
        } catch (final UsageException e) {
            err.println(NAME + ": " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (o == null) {
            out.print(HELP);
            return 0;
        }
        final Running r;
        try {
            r = start(o);
        } catch (final RuntimeException e) {
            err.println(NAME + ": " + e.getMessage());
            return 1;
        }
        out.println(NAME + ": dataplane " + r.sw.address() + " p4runtime "
                + (r.server == null ? "off" : o.p4runtimeHost() + ":" + r.server.port()) + " device " + o.deviceId());
        for (final JobSpec job : o.jobs()) {
            out.println(NAME + ": installed job " + job.jobName() + " generation " + job.generation() + " secret 0x"
                    + String.format("%08x", job.secret()) + " with "
                    + job.numWorkers() + " workers, k=" + job.k() + ", pool=" + job.poolSize());
        }
        out.flush();
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            r.close();
            stopped.countDown();
        }, "switchml-shutdown"));
        stopped.await();
        return -1;
    }

    /** A started switch and its P4Runtime server (null when off). */
    record Running(SoftwareSwitch sw, SwitchRuntimeServer server) implements AutoCloseable {
        @Override
        public void close() {
            if (server != null) {
                server.close();
            }
            sw.close();
        }
    }

    /** Starts what {@code o} describes; errors name the host and port that failed. */
    static Running start(final Options o) {
        resolve(o.host(), "--host");
        if (o.p4runtimePort() >= 0) {
            resolve(o.p4runtimeHost(), "--p4runtime-host");
        }
        final List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < o.lanes(); i++) {
            ports.add(o.port() == 0 ? 0 : o.port() + i);
        }
        final SoftwareSwitch sw;
        try {
            sw = SoftwareSwitch.start(new SwitchOptions(o.host(), ports, false, FaultPlan.NONE));
        } catch (final RuntimeException e) {
            throw new IllegalStateException("cannot bind the dataplane on " + o.host() + " UDP "
                    + (o.port() == 0 ? "free ports" : "ports " + o.port() + ".." + (o.port() + o.lanes() - 1))
                    + ": " + rootMessage(e), e);
        }
        SwitchRuntimeServer server = null;
        try {
            for (final JobSpec job : o.jobs()) {
                sw.registerJob(job);
            }
            if (o.p4runtimePort() >= 0) {
                server = SwitchRuntimeServer.start(sw, o.p4runtimeHost(), o.p4runtimePort(), o.deviceId());
            }
        } catch (final RuntimeException e) {
            sw.close();
            throw new IllegalStateException("cannot serve P4Runtime on " + o.p4runtimeHost() + " TCP port "
                    + o.p4runtimePort() + ": " + rootMessage(e), e);
        }
        return new Running(sw, server);
    }

    private static void resolve(final String host, final String option) {
        try {
            InetAddress.getByName(host);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException(option + " " + host + ": unknown host");
        }
    }

    private static String rootMessage(final Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** Parses the command line; null means help was asked for. */
    static Options parse(final String[] args) throws UsageException {
        String host = "127.0.0.1";
        int port = Wire.DEFAULT_PORT;
        int lanes = 2;
        String p4Host = SwitchRuntimeServer.DEFAULT_HOST;   // loopback unless asked: P4Runtime is unauthenticated
        int p4Port = SwitchRuntimeServer.DEFAULT_PORT;
        long device = 0;
        final List<JobSpec> jobs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            final String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                return null;
            }
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument '" + a + "'");
            }
            if (i + 1 >= args.length) {
                throw new UsageException(a + " needs a value");
            }
            final String v = args[++i];
            switch (a) {
                case "--host" -> host = nonEmpty(a, v);
                case "--port" -> port = intIn(a, v, 0, 65535);
                case "--lanes" -> lanes = intIn(a, v, 1, 16);
                case "--p4runtime-host" -> p4Host = nonEmpty(a, v);
                case "--p4runtime-port" -> p4Port = v.equals("off") ? -1 : intIn(a, v, 0, 65535);
                case "--device-id" -> device = longIn(a, v);
                case "--job" -> jobs.add(parseJob(v));
                default -> throw new UsageException("unknown option " + a);
            }
        }
        if (port != 0 && port + lanes - 1 > 65535) {
            throw new UsageException("--port " + port + " with --lanes " + lanes + " runs past port 65535");
        }
        return new Options(host, port, lanes, p4Host, p4Port, device, jobs);
    }

    private static String nonEmpty(final String option, final String v) throws UsageException {
        if (v.isBlank()) {
            throw new UsageException(option + " needs a non-empty value");
        }
        return v;
    }

    private static int intIn(final String option, final String v, final int min, final int max)
            throws UsageException {
        final int x;
        try {
            x = Integer.parseInt(v.trim());
        } catch (final NumberFormatException e) {
            throw new UsageException(option + " '" + v + "' is not a whole number");
        }
        if (x < min || x > max) {
            throw new UsageException(option + " " + x + " is outside " + min + ".." + max);
        }
        return x;
    }

    private static long longIn(final String option, final String v) throws UsageException {
        try {
            final long x = Long.parseLong(v.trim());
            if (x < 0) {
                throw new UsageException(option + " " + x + " must be >= 0");
            }
            return x;
        } catch (final NumberFormatException e) {
            throw new UsageException(option + " '" + v + "' is not a whole number");
        }
    }

    /** Parses {@code ID:GENERATION:K:POOL:host:port,host:port,...}. */
    static JobSpec parseJob(final String text) throws UsageException {
        final String[] parts = text.split(":", 5);
        if (parts.length != 5) {
            throw new UsageException("--job '" + text + "' must look like ID:GEN:K:POOL:HOST:PORT,HOST:PORT...");
        }
        final List<InetSocketAddress> workers = new ArrayList<>();
        for (final String w : parts[4].split(",")) {
            final int c = w.lastIndexOf(':');
            if (c <= 0) {
                throw new UsageException("--job worker '" + w + "' must be HOST:PORT");
            }
            final InetSocketAddress a = new InetSocketAddress(w.substring(0, c), intIn("--job worker port", w.substring(c + 1), 1, 65535));
            if (a.isUnresolved()) {
                throw new UsageException("--job worker host '" + w.substring(0, c) + "' is unknown");
            }
            workers.add(a);
        }
        final int id;
        try {
            id = Integer.parseUnsignedInt(parts[0]);
        } catch (final NumberFormatException e) {
            throw new UsageException("--job id '" + parts[0] + "' is not an unsigned 32-bit number");
        }
        try {
            return new JobSpec(id, intIn("--job generation", parts[1], 0, 65535), intIn("--job k", parts[2], 1, Wire.MAX_K),
                    intIn("--job pool", parts[3], 1, JobSpec.MAX_POOL_SIZE), workers);
        } catch (final IllegalArgumentException e) {
            throw new UsageException("--job: " + e.getMessage());
        }
    }
}

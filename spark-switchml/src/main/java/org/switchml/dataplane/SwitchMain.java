package org.switchml.dataplane;

import org.switchml.protocol.JobSpec;
import org.switchml.transport.FaultPlan;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the software switch as a standalone process.
 *
 * <pre>
 * java -cp ... org.switchml.dataplane.SwitchMain [--host 127.0.0.1] [--port 48864] [--lanes 2]
 *      [--job ID:GENERATION:K:POOL:host:port,host:port,...]...
 * </pre>
 * Lane i listens on port + i (port 0: free ports). {@code --job} registers a job statically, for use
 * without a control plane; the order of the endpoints gives the ranks.
 */
public final class SwitchMain {
    private SwitchMain() {
    }

    public static void main(final String[] args) throws InterruptedException {
        String host = "127.0.0.1";
        int port = org.switchml.protocol.Wire.DEFAULT_PORT;
        int lanes = 2;
        final List<JobSpec> jobs = new ArrayList<>();
        try {
            for (int i = 0; i < args.length; i++) {
                final String a = args[i];
                if (a.equals("--help") || a.equals("-h")) {
                    usage(null);
                    return;
                }
                if (i + 1 >= args.length) {
                    usage("missing value after " + a);
                    return;
                }
                final String v = args[++i];
                switch (a) {
                    case "--host": host = v; break;
                    case "--port": port = Integer.parseInt(v); break;
                    case "--lanes": lanes = Integer.parseInt(v); break;
                    case "--job": jobs.add(parseJob(v)); break;
                    default: usage("unknown option " + a); return;
                }
            }
        } catch (final IllegalArgumentException e) {
            usage(e.getMessage());
            return;
        }
        final List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            ports.add(port == 0 ? 0 : port + i);
        }
        final SoftwareSwitch sw = SoftwareSwitch.start(new SwitchOptions(host, ports, false, FaultPlan.NONE));
        for (final JobSpec job : jobs) {
            sw.registerJob(job);
            System.out.println("registered job " + job.jobName() + " generation " + job.generation() + " with "
                    + job.numWorkers() + " workers, k=" + job.k() + ", pool=" + job.poolSize());
        }
        System.out.println("switchml software switch listening on " + sw.address());
        final CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            sw.close();
            stop.countDown();
        }, "switchml-shutdown"));
        stop.await();
    }

    /** Parses {@code ID:GENERATION:K:POOL:host:port,host:port,...}. */
    static JobSpec parseJob(final String text) {
        final String[] parts = text.split(":", 5);
        if (parts.length != 5) {
            throw new IllegalArgumentException("--job wants ID:GENERATION:K:POOL:host:port,...; got " + text);
        }
        final List<InetSocketAddress> workers = new ArrayList<>();
        for (final String w : parts[4].split(",")) {
            final int c = w.lastIndexOf(':');
            if (c <= 0) {
                throw new IllegalArgumentException("--job worker must be host:port, got " + w);
            }
            workers.add(new InetSocketAddress(w.substring(0, c), Integer.parseInt(w.substring(c + 1))));
        }
        return new JobSpec(Integer.parseUnsignedInt(parts[0]), Integer.parseInt(parts[1]),
                Integer.parseInt(parts[2]), Integer.parseInt(parts[3]), workers);
    }

    private static void usage(final String error) {
        if (error != null) {
            System.err.println("error: " + error);
        }
        System.err.println("usage: SwitchMain [--host H] [--port P] [--lanes L] [--job ID:GEN:K:POOL:host:port,...]...");
        if (error != null) {
            System.exit(2);
        }
    }
}

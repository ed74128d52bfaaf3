package org.switchml.client;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;

/**
 * A worker in its own JVM, for {@link WorkerCrashTest}: opens its socket, prints {@code ENDPOINT host:port},
 * reads the job from stdin ({@code jobId generation secret k pool ep0,ep1,... rank switch length}), joins
 * and runs one allreduce of {@code length} ones. The test kills it with SIGKILL in the middle of that call.
 */
public final class CrashWorker {
    private CrashWorker() {}

    public static void main(final String[] args) throws Exception {
        try (SwitchMLClient client =
                SwitchMLClient.open(ClientOptions.defaults().withResultTimeoutMs(120_000))) {
            final InetSocketAddress me = client.localAddress();
            System.out.println("ENDPOINT " + me.getHostString() + ":" + me.getPort());
            System.out.flush();
            final String[] f = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
                    .readLine()
                    .trim()
                    .split(" ");
            final List<InetSocketAddress> workers = new ArrayList<>();
            for (final String e : f[5].split(",")) {
                final int c = e.lastIndexOf(':');
                workers.add(new InetSocketAddress(e.substring(0, c), Integer.parseInt(e.substring(c + 1))));
            }
            final JobSpec spec = new JobSpec(
                    Integer.parseInt(f[0]),
                    Integer.parseInt(f[1]),
                    Integer.parseInt(f[2]),
                    Integer.parseInt(f[3]),
                    Integer.parseInt(f[4]),
                    workers);
            final JobSession session = client.join(spec, Integer.parseInt(f[6]), SwitchAddress.parse(f[7]));
            final float[] in = new float[Integer.parseInt(f[8])];
            Arrays.fill(in, 1f);
            System.out.println("CALLING");
            System.out.flush();
            session.allReduce(in);
            System.out.println("DONE"); // not reached when the test kills this JVM mid-call
        }
    }
}

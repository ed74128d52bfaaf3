package org.switchml.control;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchMLException;
import org.switchml.transport.FaultPlan;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A P4Runtime server (gRPC) in front of a {@link SoftwareSwitch}, so the software switch is programmed
 * exactly like BMv2: same RPCs, same names as p4/switchml.p4 (docs/control-plane.md). It serves the subset
 * a {@link SwitchController} uses: Capabilities, StreamChannel arbitration, Set/GetForwardingPipelineConfig,
 * Write and Read of table entries and multicast groups, Read of counters.
 *
 * <p>Runs standalone with {@link #main}.
 */
public final class SwitchRuntimeServer implements AutoCloseable {
    /** Conventional P4Runtime port (BMv2 uses it too). */
    public static final int DEFAULT_PORT = 9559;

    private final Server server;
    private final RuntimeService service;
    private final SoftwareSwitch dataplane;
    private final String host;
    private final long deviceId;

    private SwitchRuntimeServer(final Server server, final RuntimeService service, final SoftwareSwitch dataplane,
                                final String host, final long deviceId) {
        this.server = server;
        this.service = service;
        this.dataplane = dataplane;
        this.host = host;
        this.deviceId = deviceId;
    }

    /** Serves {@code dataplane} as device 0 on {@code host:port} (0 picks a free port). */
    public static SwitchRuntimeServer start(final SoftwareSwitch dataplane, final String host, final int port) {
        return start(dataplane, host, port, 0);
    }

    /** Serves {@code dataplane} as {@code deviceId} on {@code host:port} (0 picks a free port). */
    public static SwitchRuntimeServer start(final SoftwareSwitch dataplane, final String host, final int port,
                                            final long deviceId) {
        final RuntimeService service = new RuntimeService(dataplane, deviceId, P4InfoIndex.bundled());
        final Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                .addService(service).build();
        try {
            server.start();
        } catch (final IOException e) {
            throw new SwitchMLException("cannot serve P4Runtime on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return new SwitchRuntimeServer(server, service, dataplane, host, deviceId);
    }

    /** The port the P4Runtime server listens on. */
    public int port() {
        return server.getPort();
    }

    public String host() {
        return host;
    }

    public long deviceId() {
        return deviceId;
    }

    /** The software switch behind this server. */
    public SoftwareSwitch dataplane() {
        return dataplane;
    }

    /** Jobs the server has assembled from table entries and registered with the dataplane. */
    public List<JobSpec> liveJobs() {
        return service.liveJobs();
    }

    /** Options for a controller of this server (device id, host, port; election id 1). */
    public ControllerOptions controllerOptions() {
        return ControllerOptions.of(host, port()).withDeviceId(deviceId);
    }

    /** Stops serving and ends every controller stream. The dataplane is left running (its owner closes it). */
    @Override
    public void close() {
        service.closeAll();
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
    }

    /**
     * Standalone software switch with its P4Runtime port. Options: {@code --host H} (default 127.0.0.1),
     * {@code --lanes L} (4), {@code --lane-port P} (first lane port, 48864 = 0xBEE0; lane i listens on P+i;
     * 0 = free ports), {@code --p4runtime-port P} (9559), {@code --device-id D} (0). Runs until killed.
     */
    public static void main(final String[] args) throws InterruptedException {
        String host = "127.0.0.1";
        int lanes = 4;
        int lanePort = 0xBEE0;
        int p4rtPort = DEFAULT_PORT;
        long device = 0;
        for (int i = 0; i < args.length; i++) {
            final String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(usage("missing value after " + a));
            }
            final String v = args[++i];
            switch (a) {
                case "--host" -> host = v;
                case "--lanes" -> lanes = Integer.parseInt(v);
                case "--lane-port" -> lanePort = Integer.parseInt(v);
                case "--p4runtime-port" -> p4rtPort = Integer.parseInt(v);
                case "--device-id" -> device = Long.parseLong(v);
                default -> throw new IllegalArgumentException(usage("unknown option " + a));
            }
        }
        final List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            ports.add(lanePort == 0 ? 0 : lanePort + i);
        }
        final SoftwareSwitch sw = SoftwareSwitch.start(new SwitchOptions(host, ports, false, FaultPlan.NONE));
        final SwitchRuntimeServer server = start(sw, host, p4rtPort, device);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            sw.close();
            stopped.countDown();
        }, "switchml-shutdown"));
        System.out.println("software switch: dataplane " + sw.address() + ", P4Runtime " + host + ":" + server.port()
                + " device " + device);
        stopped.await();
    }

    private static String usage(final String problem) {
        return problem + "; usage: SwitchRuntimeServer [--host H] [--lanes L] [--lane-port P] [--p4runtime-port P]"
                + " [--device-id D]";
    }
}

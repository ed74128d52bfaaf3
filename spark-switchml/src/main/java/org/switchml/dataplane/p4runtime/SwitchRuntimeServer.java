package org.switchml.dataplane.p4runtime;

import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.p4info.P4InfoIndex;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchMLException;
import p4.v1.P4RuntimeGrpc;

/**
 * A P4Runtime server (gRPC) in front of a {@link SoftwareSwitch}, so the software switch is programmed
 * exactly like BMv2: same RPCs, same names as p4/switchml.p4 (docs/control-plane.md). It serves the subset
 * a {@code SwitchController} uses: Capabilities, StreamChannel arbitration, Set/GetForwardingPipelineConfig,
 * Write and Read of table entries and multicast groups, Read of counters.
 *
 * <p>{@code SwitchMain} runs it standalone with its software switch ({@code bin/switchml-switch}).
 */
public final class SwitchRuntimeServer implements AutoCloseable {
    /** Conventional P4Runtime port (BMv2 uses it too). */
    public static final int DEFAULT_PORT = 9559;
    /** The P4Runtime API version this server reports in Capabilities. */
    public static final String API_VERSION = RuntimeService.API_VERSION;

    private final Server server;
    private final RuntimeService service;
    private final SoftwareSwitch dataplane;
    private final String host;
    private final long deviceId;

    /** The same service for controllers in this JVM (no socket, no thread hand-off); see {@link #inProcessName()}. */
    private final Server inProcess;

    private final String inProcessName;

    private SwitchRuntimeServer(
            final Server server,
            final Server inProcess,
            final String inProcessName,
            final RuntimeService service,
            final SoftwareSwitch dataplane,
            final String host,
            final long deviceId) {
        this.server = server;
        this.inProcess = inProcess;
        this.inProcessName = inProcessName;
        this.service = service;
        this.dataplane = dataplane;
        this.host = host;
        this.deviceId = deviceId;
    }

    /** The address the server binds when none is given: loopback only. */
    public static final String DEFAULT_HOST = "127.0.0.1";

    /**
     * Serves {@code dataplane} as device 0 on loopback ({@link #DEFAULT_HOST}) port {@code port} (0 picks a
     * free port): P4Runtime has no authentication here, so only local controllers may reach it unless an
     * address is given explicitly.
     */
    public static SwitchRuntimeServer start(final SoftwareSwitch dataplane, final int port) {
        return start(dataplane, DEFAULT_HOST, port, 0);
    }

    /** Serves {@code dataplane} as device 0 on {@code host:port} (0 picks a free port). */
    public static SwitchRuntimeServer start(final SoftwareSwitch dataplane, final String host, final int port) {
        return start(dataplane, host, port, 0);
    }

    /** Serves {@code dataplane} as {@code deviceId} on {@code host:port} (0 picks a free port), unauthenticated. */
    public static SwitchRuntimeServer start(
            final SoftwareSwitch dataplane, final String host, final int port, final long deviceId) {
        return start(dataplane, host, port, deviceId, InsecureServerCredentials.create(), null);
    }

    /**
     * Serves {@code dataplane} as {@code deviceId} on {@code host:port} (0 picks a free port) with
     * {@code credentials}; when {@code interceptor} is given, every call passes it first (e.g. a bearer-token check).
     */
    public static SwitchRuntimeServer start(
            final SoftwareSwitch dataplane,
            final String host,
            final int port,
            final long deviceId,
            final ServerCredentials credentials,
            final ServerInterceptor interceptor) {
        return start(dataplane, host, port, deviceId, credentials, interceptor, true);
    }

    /**
     * As {@link #start(SoftwareSwitch, String, int, long, ServerCredentials, ServerInterceptor)}; unless
     * {@code writable}, the socket refuses Write and SetForwardingPipelineConfig with PERMISSION_DENIED before
     * arbitration is even looked at (reads, Capabilities and StreamChannel, where a controller can be a backup, are
     * served). The in-process side ({@link #inProcessName()}) always takes writes from its primary.
     */
    public static SwitchRuntimeServer start(
            final SoftwareSwitch dataplane,
            final String host,
            final int port,
            final long deviceId,
            final ServerCredentials credentials,
            final ServerInterceptor interceptor,
            final boolean writable) {
        final RuntimeService service = new RuntimeService(dataplane, deviceId, P4InfoIndex.bundled());
        final List<ServerInterceptor> chain = new ArrayList<>();
        if (!writable) {
            chain.add(readOnly("the P4Runtime server on " + host + ":" + port));
        }
        if (interceptor != null) {
            chain.add(interceptor); // last added runs first: the credential before anything else
        }
        final Server server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port), credentials)
                .addService(ServerInterceptors.intercept(service, chain))
                .build();
        try {
            server.start();
        } catch (final IOException e) {
            throw new SwitchMLException("cannot serve P4Runtime on " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return withInProcess(server, service, dataplane, host, deviceId);
    }

    /** Refuses the RPCs that change the switch. */
    private static ServerInterceptor readOnly(final String what) {
        final Set<String> writes = Set.of(
                P4RuntimeGrpc.getWriteMethod().getFullMethodName(),
                P4RuntimeGrpc.getSetForwardingPipelineConfigMethod().getFullMethodName());
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(
                    final ServerCall<Q, A> call, final Metadata headers, final ServerCallHandler<Q, A> next) {
                final String method = call.getMethodDescriptor().getFullMethodName();
                if (writes.contains(method)) {
                    call.close(
                            Status.PERMISSION_DENIED.withDescription(what + " is read-only: "
                                    + call.getMethodDescriptor().getBareMethodName()
                                    + " refused (the switch's own controller "
                                    + "owns the switch; its operator turns writes on with --p4runtime-writes)"),
                            new Metadata());
                    return new ServerCall.Listener<>() {};
                }
                return next.startCall(call, headers);
            }
        };
    }

    /**
     * Serves {@code dataplane} as device 0 to controllers in this JVM only ({@link #inProcessName()}): no socket,
     * so nothing outside the JVM can program it.
     */
    public static SwitchRuntimeServer startInProcess(final SoftwareSwitch dataplane) {
        return withInProcess(null, new RuntimeService(dataplane, 0, P4InfoIndex.bundled()), dataplane, "in-process", 0);
    }

    private static SwitchRuntimeServer withInProcess(
            final Server server,
            final RuntimeService service,
            final SoftwareSwitch dataplane,
            final String host,
            final long deviceId) {
        final String name = "switchml-p4runtime-" + System.identityHashCode(service) + "-" + System.nanoTime();
        final Server inProcess = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(service)
                .build();
        try {
            inProcess.start();
        } catch (final IOException e) {
            if (server != null) {
                server.shutdownNow();
            }
            throw new SwitchMLException("cannot serve P4Runtime in process as " + name + ": " + e.getMessage(), e);
        }
        return new SwitchRuntimeServer(server, inProcess, name, service, dataplane, host, deviceId);
    }

    /**
     * The name of the same P4Runtime service on gRPC's in-process transport, for a controller in this JVM
     * (the embedded switch's): the same messages and checks as over TCP, without a socket or a thread hand-off.
     */
    public String inProcessName() {
        return inProcessName;
    }

    /** The port the P4Runtime server listens on (-1 when it serves in process only). */
    public int port() {
        return server == null ? -1 : server.getPort();
    }

    /** The socket address the server is bound to (null when it serves in process only). */
    public InetSocketAddress boundAddress() {
        return server == null
                ? null
                : (InetSocketAddress) server.getListenSockets().get(0);
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

    /** Stops serving and ends every controller stream. The dataplane is left running (its owner closes it). */
    @Override
    public void close() {
        service.closeAll();
        inProcess.shutdownNow();
        if (server == null) {
            return;
        }
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
}

package org.switchml.service;

import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import org.switchml.auth.BearerToken;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Serves a {@link JobDesk} over gRPC: on a TCP socket behind TLS (or plaintext on loopback) and a bearer token,
 * or only in this JVM over gRPC's in-process transport (the embedded switch's, reachable by nothing else).
 * Closing it closes the desk.
 */
public final class JobServiceServer implements AutoCloseable {
    private final Server server;
    private final JobDesk desk;
    private final String inProcessName;

    private JobServiceServer(final Server server, final JobDesk desk, final String inProcessName) {
        this.server = server;
        this.desk = desk;
        this.inProcessName = inProcessName;
    }

    /**
     * Serves {@code desk} on {@code host:port} (0: a free port); every call must carry {@code token}.
     *
     * @param credentials TLS, or plaintext when {@code host} is loopback (see {@link org.switchml.auth.TlsFiles})
     */
    public static JobServiceServer start(final JobDesk desk, final String host, final int port,
                                         final ServerCredentials credentials, final BearerToken token) {
        final String what = "the job service on " + host + ":" + port;
        final Server s = NettyServerBuilder.forAddress(new InetSocketAddress(host, port), credentials)
                .addService(ServerInterceptors.intercept(new JobServiceEndpoint(desk),
                        token.interceptor("the job service of switch " + desk.description().dataplane())))
                .build();
        try {
            s.start();
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot serve " + what + ": " + e.getMessage(), e);
        }
        return new JobServiceServer(s, desk, null);
    }

    /** Serves {@code desk} in this JVM only, under a fresh in-process name ({@link #inProcessName()}). */
    public static JobServiceServer startInProcess(final JobDesk desk) {
        final String name = "switchml-jobs-" + System.identityHashCode(desk) + "-" + System.nanoTime();
        final Server s = InProcessServerBuilder.forName(name).directExecutor()
                .addService(new JobServiceEndpoint(desk)).build();
        try {
            s.start();
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot serve the job service in process: " + e.getMessage(), e);
        }
        return new JobServiceServer(s, desk, name);
    }

    /** The TCP port served on (-1 in process). */
    public int port() {
        return inProcessName == null ? server.getPort() : -1;
    }

    /** The in-process name, or null on TCP. */
    public String inProcessName() {
        return inProcessName;
    }

    public JobDesk desk() {
        return desk;
    }

    /** Stops serving, then removes every job and gives up the switch. */
    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        desk.close();
    }
}

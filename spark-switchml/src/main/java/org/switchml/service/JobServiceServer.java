package org.switchml.service;

import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.switchml.auth.BearerToken;
import org.switchml.auth.Tenants;

/**
 * Serves a {@link JobDesk} over gRPC: on a TCP socket behind TLS (or plaintext on loopback) and the tenants'
 * bearer tokens, or only in this JVM over gRPC's in-process transport (the embedded switch's, reachable by
 * nothing else). Closing it closes the desk.
 *
 * <p>The TCP server is bounded: {@value #THREADS} threads serve every call (no handler waits for the switch,
 * so none is ever parked), a request is at most {@value #MAX_MESSAGE_BYTES} bytes, one connection carries at
 * most {@value #MAX_CALLS_PER_CONNECTION} calls at once, a TLS handshake gets 10 s, and clients may keep their
 * connection alive with pings every 5 s or more.
 */
public final class JobServiceServer implements AutoCloseable {
    /** Threads that serve calls. */
    public static final int THREADS = 4;
    /** Largest request taken: a CreateJob of 256 workers is about 7 KB. */
    public static final int MAX_MESSAGE_BYTES = 64 * 1024;
    /** Calls one connection may have open at once (an application's waits, renewals and reads). */
    public static final int MAX_CALLS_PER_CONNECTION = 32;
    /** Shortest keepalive ping interval a client may use (clients ping every 10 s at the least). */
    static final long PERMIT_KEEPALIVE_MS = 5_000;

    private final Server server;
    private final JobDesk desk;
    private final String inProcessName;
    private final ExecutorService executor;

    private JobServiceServer(
            final Server server, final JobDesk desk, final String inProcessName, final ExecutorService executor) {
        this.server = server;
        this.desk = desk;
        this.inProcessName = inProcessName;
        this.executor = executor;
    }

    /** Serves {@code desk} on {@code host:port} (0: a free port) to one tenant, the holders of {@code token}. */
    public static JobServiceServer start(
            final JobDesk desk,
            final String host,
            final int port,
            final ServerCredentials credentials,
            final BearerToken token) {
        return start(desk, host, port, credentials, Tenants.of(token));
    }

    /**
     * Serves {@code desk} on {@code host:port} (0: a free port); every call must carry one of {@code tenants}'
     * tokens, and counts against that tenant's quotas.
     *
     * @param credentials TLS, or plaintext when {@code host} is loopback (see {@link org.switchml.auth.TlsFiles})
     */
    public static JobServiceServer start(
            final JobDesk desk,
            final String host,
            final int port,
            final ServerCredentials credentials,
            final Tenants tenants) {
        final String what = "the job service on " + host + ":" + port;
        final AtomicInteger n = new AtomicInteger();
        final ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
            final Thread t = new Thread(r, "switchml-jobs-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        final Server s = NettyServerBuilder.forAddress(new InetSocketAddress(host, port), credentials)
                .executor(executor)
                .maxInboundMessageSize(MAX_MESSAGE_BYTES)
                .maxInboundMetadataSize(8 * 1024)
                .maxConcurrentCallsPerConnection(MAX_CALLS_PER_CONNECTION)
                .handshakeTimeout(10, TimeUnit.SECONDS)
                .permitKeepAliveTime(PERMIT_KEEPALIVE_MS, TimeUnit.MILLISECONDS)
                .permitKeepAliveWithoutCalls(true)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .addService(ServerInterceptors.intercept(
                        new JobServiceEndpoint(desk),
                        tenants.interceptor("the job service of switch "
                                + desk.description().dataplane())))
                .build();
        try {
            s.start();
        } catch (final IOException e) {
            executor.shutdownNow();
            throw new UncheckedIOException("cannot serve " + what + ": " + e.getMessage(), e);
        }
        return new JobServiceServer(s, desk, null, executor);
    }

    /** Serves {@code desk} in this JVM only, under a fresh in-process name ({@link #inProcessName()}). */
    public static JobServiceServer startInProcess(final JobDesk desk) {
        final String name = "switchml-jobs-" + System.identityHashCode(desk) + "-" + System.nanoTime();
        final Server s = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(new JobServiceEndpoint(desk))
                .build();
        try {
            s.start();
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot serve the job service in process: " + e.getMessage(), e);
        }
        return new JobServiceServer(s, desk, name, null);
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

    /** Stops taking calls, removes every job, gives up the switch, and stops serving. */
    @Override
    public void close() {
        server.shutdown();
        // The desk first: it answers the requests still waiting for room, so the server's calls can end.
        desk.close();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}

package org.switchml.auth;

import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * TLS for the control plane's gRPC servers and clients, from PEM files: a server certificate chain and its
 * PKCS#8 key, optionally a CA whose client certificates the server then requires; a client trusts the
 * server's certificate (or its CA) and may present its own certificate.
 */
public final class TlsFiles {
    private TlsFiles() {
    }

    /**
     * Server credentials: TLS with {@code certChain} and {@code key}; when {@code clientCa} is not empty, clients
     * must present a certificate signed by it. With no certificate (empty), plaintext, allowed only when the
     * server binds a loopback address.
     */
    public static ServerCredentials server(final String certChain, final String key, final String clientCa,
                                           final String bindHost, final String what) {
        if (certChain.isEmpty() && key.isEmpty()) {
            if (!clientCa.isEmpty()) {
                throw new IllegalArgumentException(what + ": a client CA needs a server certificate and key too");
            }
            if (!isLoopback(bindHost)) {
                throw new IllegalArgumentException(what + " binds " + bindHost + ", beyond loopback, so it needs TLS: "
                        + "give a server certificate and key (PEM)");
            }
            return InsecureServerCredentials.create();
        }
        if (certChain.isEmpty() || key.isEmpty()) {
            throw new IllegalArgumentException(what + ": TLS needs both a certificate chain and its key (PEM)");
        }
        try {
            final TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder()
                    .keyManager(new File(certChain), new File(key));
            if (!clientCa.isEmpty()) {
                b.trustManager(new File(clientCa)).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (final IOException | RuntimeException e) {
            throw new IllegalArgumentException(what + ": cannot read the TLS files (" + certChain + ", " + key
                    + (clientCa.isEmpty() ? "" : ", " + clientCa) + "): " + e.getMessage(), e);
        }
    }

    /**
     * Client credentials: TLS trusting {@code trustCert} (the server's certificate or its CA), presenting
     * {@code clientCert}/{@code clientKey} when given; with no trust file, plaintext, allowed only towards a
     * loopback address. {@code token}, when not null, rides on every call.
     */
    public static ChannelCredentials client(final String trustCert, final String clientCert, final String clientKey,
                                            final BearerToken token, final String serverHost, final String what) {
        final ChannelCredentials transport;
        if (trustCert.isEmpty()) {
            if (!isLoopback(serverHost)) {
                throw new IllegalArgumentException(what + " is at " + serverHost + ", beyond loopback, so it is "
                        + "reached over TLS only: set the certificate to trust (spark.switchml.tls.trustCertFile)");
            }
            transport = InsecureChannelCredentials.create();
        } else {
            try {
                final TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(new File(trustCert));
                if (!clientCert.isEmpty() || !clientKey.isEmpty()) {
                    b.keyManager(new File(clientCert), new File(clientKey));
                }
                transport = b.build();
            } catch (final IOException | RuntimeException e) {
                throw new IllegalArgumentException(what + ": cannot read the TLS files (" + trustCert
                        + (clientCert.isEmpty() ? "" : ", " + clientCert + ", " + clientKey) + "): " + e.getMessage(), e);
            }
        }
        return token == null ? transport : CompositeChannelCredentials.create(transport, token.callCredentials());
    }

    /**
     * Whether {@code host} names loopback only: every address it resolves to is a loopback address (an unknown
     * host is not, and neither is a name with one loopback address among others).
     */
    public static boolean isLoopback(final String host) {
        try {
            return allLoopback(InetAddress.getAllByName(host));
        } catch (final UnknownHostException e) {
            return false;
        }
    }

    /** Whether there is an address and every one is loopback. */
    static boolean allLoopback(final InetAddress[] all) {
        for (final InetAddress a : all) {
            if (!a.isLoopbackAddress()) {
                return false;
            }
        }
        return all.length > 0;
    }
}

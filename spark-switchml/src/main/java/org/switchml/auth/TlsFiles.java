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
import java.io.InputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * TLS for the control plane's gRPC servers and clients, from PEM files: a server certificate chain and its
 * PKCS#8 key, optionally a CA whose client certificates the server then requires; a client trusts the
 * server's certificate (or its CA) and may present its own certificate.
 */
public final class TlsFiles {
    /** A PEM PKCS#8 private key, its base64 body as group 1. */
    private static final Pattern PKCS8 =
            Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    private TlsFiles() {}

    /**
     * Server credentials: TLS with {@code certChain} and {@code key}; when {@code clientCa} is not empty, clients
     * must present a certificate signed by it. With no certificate (empty), plaintext, allowed only when the
     * server binds a loopback address.
     */
    public static ServerCredentials server(
            final String certChain, final String key, final String clientCa, final String bindHost, final String what) {
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
            certificates(certChain);
            privateKey(key);
            if (!clientCa.isEmpty()) {
                certificates(clientCa);
            }
            final TlsServerCredentials.Builder b =
                    TlsServerCredentials.newBuilder().keyManager(new File(certChain), new File(key));
            if (!clientCa.isEmpty()) {
                b.trustManager(new File(clientCa)).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (final IOException | RuntimeException e) {
            throw new IllegalArgumentException(
                    what + ": cannot read the TLS files (" + certChain + ", " + key
                            + (clientCa.isEmpty() ? "" : ", " + clientCa) + "): " + e.getMessage(),
                    e);
        }
    }

    /**
     * Client credentials: TLS trusting {@code trustCert} (the server's certificate or its CA), presenting
     * {@code clientCert}/{@code clientKey} when given; with no trust file, plaintext, allowed only towards a
     * loopback address. {@code token}, when not null, rides on every call.
     */
    public static ChannelCredentials client(
            final String trustCert,
            final String clientCert,
            final String clientKey,
            final BearerToken token,
            final String serverHost,
            final String what) {
        final ChannelCredentials transport;
        if (trustCert.isEmpty()) {
            if (!isLoopback(serverHost)) {
                throw new IllegalArgumentException(what + " is at " + serverHost + ", beyond loopback, so it is "
                        + "reached over TLS only: set the certificate to trust (spark.switchml.tls.trustCertFile)");
            }
            transport = InsecureChannelCredentials.create();
        } else {
            try {
                certificates(trustCert);
                if (!clientCert.isEmpty() || !clientKey.isEmpty()) {
                    certificates(clientCert);
                    privateKey(clientKey);
                }
                final TlsChannelCredentials.Builder b =
                        TlsChannelCredentials.newBuilder().trustManager(new File(trustCert));
                if (!clientCert.isEmpty() || !clientKey.isEmpty()) {
                    b.keyManager(new File(clientCert), new File(clientKey));
                }
                transport = b.build();
            } catch (final IOException | RuntimeException e) {
                throw new IllegalArgumentException(
                        what + ": cannot read the TLS files (" + trustCert
                                + (clientCert.isEmpty() ? "" : ", " + clientCert + ", " + clientKey) + "): "
                                + e.getMessage(),
                        e);
            }
        }
        return token == null ? transport : CompositeChannelCredentials.create(transport, token.callCredentials());
    }

    /**
     * Parses the X.509 certificates of a PEM file now, so that a wrong file is refused when the options are read
     * rather than at the first TLS handshake (gRPC reads the bytes here and parses them only then).
     */
    private static void certificates(final String pem) throws IOException {
        try (InputStream in = Files.newInputStream(Path.of(pem))) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new IOException(pem + " holds no certificate");
            }
        } catch (final CertificateException e) {
            throw new IOException(pem + " holds no valid PEM certificate (" + e.getMessage() + ")", e);
        }
    }

    /** Parses a PEM PKCS#8 private key ({@code BEGIN PRIVATE KEY}, unencrypted: what gRPC takes) now. */
    private static void privateKey(final String pem) throws IOException {
        final String text = Files.readString(Path.of(pem), StandardCharsets.US_ASCII);
        final Matcher m = PKCS8.matcher(text);
        if (!m.find()) {
            throw new IOException(pem + " holds no unencrypted PKCS#8 private key (-----BEGIN PRIVATE KEY-----)");
        }
        final byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(1));
        } catch (final IllegalArgumentException e) {
            throw new IOException(pem + ": the private key is not valid base64", e);
        }
        for (final String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
            try {
                KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
                return;
            } catch (final GeneralSecurityException e) {
                // not this algorithm
            }
        }
        throw new IOException(pem + " holds no RSA, EC or EdDSA PKCS#8 private key");
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

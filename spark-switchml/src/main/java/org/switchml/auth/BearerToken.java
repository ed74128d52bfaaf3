package org.switchml.auth;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Executor;

/**
 * A shared secret that every client of a switch's control plane presents as {@code authorization: Bearer <token>}.
 * It is kept in a file readable only by the users allowed to run jobs on the switch; the first line is the token.
 */
public final class BearerToken {
    /** The gRPC metadata key of the credential. */
    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final String PREFIX = "Bearer ";
    /** Shorter tokens are refused: they can be guessed. */
    static final int MIN_LENGTH = 16;

    private final String value;
    private final String source;

    private BearerToken(final String value, final String source) {
        if (value.length() < MIN_LENGTH || !value.chars().allMatch(c -> c > ' ' && c < 127)) {
            throw new IllegalArgumentException("the bearer token in " + source + " must be at least " + MIN_LENGTH
                    + " printable ASCII characters without spaces");
        }
        this.value = value;
        this.source = source;
    }

    /** A token given directly (tests, in-process use). */
    public static BearerToken of(final String value) {
        return new BearerToken(value, "the given token");
    }

    /** Reads the token from the first line of {@code file}. */
    public static BearerToken read(final Path file) {
        final String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read the bearer token file " + file + ": " + e.getMessage(), e);
        }
        final int nl = text.indexOf('\n');
        return new BearerToken((nl < 0 ? text : text.substring(0, nl)).trim(), "file " + file);
    }

    /**
     * Reads the token from {@code file}, or, when the file does not exist, draws a random one and writes it there
     * readable by its owner only (a switch started for the first time).
     *
     * @return the token, and whether it was created
     */
    public static BearerToken readOrCreate(final Path file) {
        if (Files.exists(file)) {
            return read(file);
        }
        final byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        final String token = HexFormat.of().formatHex(b);
        try {
            final Path dir = file.toAbsolutePath().getParent();
            if (dir != null) {
                Files.createDirectories(dir);
            }
            Files.writeString(file, token + "\n", StandardCharsets.US_ASCII);
            file.toFile().setReadable(false, false);
            file.toFile().setWritable(false, false);
            file.toFile().setReadable(true, true);
            file.toFile().setWritable(true, true);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot write a new bearer token to " + file + ": " + e.getMessage(), e);
        }
        return new BearerToken(token, "file " + file);
    }

    /** Where the token came from, for messages (never the token). */
    public String source() {
        return source;
    }

    /** Whether {@code presented} (the whole header value) carries this token; constant time in the token. */
    boolean matches(final String presented) {
        if (presented == null || !presented.startsWith(PREFIX)) {
            return false;
        }
        return MessageDigest.isEqual(presented.substring(PREFIX.length()).getBytes(StandardCharsets.US_ASCII),
                value.getBytes(StandardCharsets.US_ASCII));
    }

    /** Call credentials that attach this token to every call of a client. */
    public CallCredentials callCredentials() {
        final String header = PREFIX + value;
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(final RequestInfo info, final Executor executor, final MetadataApplier applier) {
                final Metadata m = new Metadata();
                m.put(AUTHORIZATION, header);
                applier.apply(m);
            }
        };
    }

    /**
     * A server interceptor that refuses, before the service sees it, every call without this token
     * (UNAUTHENTICATED) or with another one (PERMISSION_DENIED).
     *
     * @param what names the server in the refusal, e.g. "the job service of switch 10.0.0.1:48864"
     */
    public ServerInterceptor interceptor(final String what) {
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(final ServerCall<Q, A> call, final Metadata headers,
                                                              final ServerCallHandler<Q, A> next) {
                final String presented = headers.get(AUTHORIZATION);
                if (presented == null) {
                    call.close(Status.UNAUTHENTICATED.withDescription(what + " needs a bearer token (the rack's "
                            + "token file: spark.switchml.auth.tokenFile for Spark, --token-file for the tools)"),
                            new Metadata());
                    return new ServerCall.Listener<>() { };
                }
                if (!matches(presented)) {
                    call.close(Status.PERMISSION_DENIED.withDescription(what + " refused the bearer token: it is "
                            + "not the switch's token"), new Metadata());
                    return new ServerCall.Listener<>() { };
                }
                return next.startCall(call, headers);
            }
        };
    }
}

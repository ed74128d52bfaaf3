package org.switchml.auth;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.ServerInterceptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Executor;

/**
 * A shared secret that every client of a switch's control plane presents as {@code authorization: Bearer <token>}.
 * It is kept in a file private to its owner (mode 600); the first line that is not blank or a {@code #} comment
 * is the token. A server may accept several ({@link Tenants}).
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

    /** A token read from {@code source} (for messages). */
    static BearerToken of(final String value, final String source) {
        return new BearerToken(value, source);
    }

    /**
     * Reads the token from {@code file}: its first line that is neither blank nor a {@code #} comment. The file
     * must be private to its owner (mode 600 or stricter): one its group or others may read is refused.
     */
    public static BearerToken read(final Path file) {
        return new BearerToken(TokenFiles.read(file).get(0).token(), "file " + file);
    }

    /**
     * Reads the token from {@code file}, or, when the file does not exist, draws a random one and writes it there
     * readable by its owner only (a switch started for the first time).
     */
    public static BearerToken readOrCreate(final Path file) {
        if (!Files.exists(file)) {
            final String token = random();
            try {
                TokenFiles.createPrivate(file, token + "\n");
                return new BearerToken(token, "file " + file);
            } catch (final FileAlreadyExistsException raced) {
                // Another process created it first: use what it wrote.
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot write a new bearer token to " + file + ": " + e.getMessage(), e);
            }
        }
        return read(file);
    }

    /** 24 random bytes, hex. */
    static String random() {
        final byte[] b = new byte[24];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** Where the token came from, for messages (never the token). */
    public String source() {
        return source;
    }

    /** Whether {@code other} is the same token; constant time in the token. */
    public boolean sameAs(final BearerToken other) {
        return MessageDigest.isEqual(
                other.value.getBytes(StandardCharsets.US_ASCII), value.getBytes(StandardCharsets.US_ASCII));
    }

    /** Whether {@code presented} (the whole header value) carries this token; constant time in the token. */
    boolean matches(final String presented) {
        if (presented == null || !presented.startsWith(PREFIX)) {
            return false;
        }
        return MessageDigest.isEqual(
                presented.substring(PREFIX.length()).getBytes(StandardCharsets.US_ASCII),
                value.getBytes(StandardCharsets.US_ASCII));
    }

    /** Call credentials that attach this token to every call of a client. */
    public CallCredentials callCredentials() {
        final String header = PREFIX + value;
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(
                    final RequestInfo info, final Executor executor, final MetadataApplier applier) {
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
        return Tenants.of(this).interceptor(what);
    }
}

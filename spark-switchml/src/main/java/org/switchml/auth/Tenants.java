package org.switchml.auth;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The application tokens a server accepts, one per tenant: every line of the server's token file that is not
 * blank or a {@code #} comment is one tenant's token, and tenant {@code i} is the {@code i}-th such line. A
 * tenant's own copy of the file holds its token alone. The server's interceptor lets a call in with any of them
 * and tells the service which tenant called ({@link #caller()}), so per-tenant quotas can count it.
 */
public final class Tenants {
    /** The tenant of the call being served: set by {@link #interceptor}, absent for calls in this JVM. */
    private static final Context.Key<Integer> CALLER = Context.key("switchml-tenant");

    private final List<BearerToken> tokens;
    private final String source;

    private Tenants(final List<BearerToken> tokens, final String source) {
        for (int i = 0; i < tokens.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (tokens.get(i).sameAs(tokens.get(j))) {
                    throw new IllegalArgumentException(tokens.get(i).source() + " repeats the token of "
                            + tokens.get(j).source() + ": each tenant needs a token of its own");
                }
            }
        }
        this.tokens = List.copyOf(tokens);
        this.source = source;
    }

    /** One tenant per token given (tests, in-process use). */
    public static Tenants of(final BearerToken... tokens) {
        return new Tenants(List.of(tokens), "the given tokens");
    }

    /**
     * Every token of {@code file}, one tenant each. The file must be private to its owner (mode 600 or stricter).
     *
     * @throws IllegalArgumentException missing, unreadable or not private, no token, a short or repeated token
     */
    public static Tenants read(final Path file) {
        final List<BearerToken> out = new ArrayList<>();
        for (final TokenFiles.Line l : TokenFiles.read(file)) {
            out.add(BearerToken.of(l.token(), "line " + l.number() + " of file " + file));
        }
        return new Tenants(out, "file " + file);
    }

    /**
     * {@link #read} {@code file}, or, when it does not exist, writes one random token there (mode 600, in one
     * step) and serves that one tenant.
     */
    public static Tenants readOrCreate(final Path file) {
        if (!Files.exists(file)) {
            final String token = BearerToken.random();
            try {
                TokenFiles.createPrivate(file, token + "\n");
                return new Tenants(List.of(BearerToken.of(token, "line 1 of file " + file)), "file " + file);
            } catch (final FileAlreadyExistsException raced) {
                // Another process created it first: use what it wrote.
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot write a new bearer token to " + file + ": " + e.getMessage(), e);
            }
        }
        return read(file);
    }

    /** How many tenants (tokens). */
    public int size() {
        return tokens.size();
    }

    /** Where the tokens came from, for messages (never a token). */
    public String source() {
        return source;
    }

    /** Whether {@code token} is one of these tenants' tokens. */
    public boolean contains(final BearerToken token) {
        boolean found = false;
        for (final BearerToken t : tokens) {
            found |= t.sameAs(token); // every one compared: the time says nothing about which
        }
        return found;
    }

    /**
     * The tenant of the call this thread serves: 1..{@link #size()} for a call that passed {@link #interceptor},
     * 0 for a call that came in without one (a server in this JVM only).
     */
    public static int caller() {
        final Integer t = CALLER.get();
        return t == null ? 0 : t;
    }

    /**
     * A server interceptor that refuses, before the service sees it, every call without a token
     * (UNAUTHENTICATED) or with one that is none of these (PERMISSION_DENIED), and tells the service which
     * tenant made the others ({@link #caller()}).
     *
     * @param what names the server in the refusal, e.g. "the job service of switch 10.0.0.1:48864"
     */
    public ServerInterceptor interceptor(final String what) {
        return new ServerInterceptor() {
            @Override
            public <Q, A> ServerCall.Listener<Q> interceptCall(
                    final ServerCall<Q, A> call, final Metadata headers, final ServerCallHandler<Q, A> next) {
                final String presented = headers.get(BearerToken.AUTHORIZATION);
                if (presented == null) {
                    call.close(
                            Status.UNAUTHENTICATED.withDescription(
                                    what + " needs a bearer token (the rack's "
                                            + "token file: spark.switchml.auth.tokenFile for Spark, --token-file for the tools)"),
                            new Metadata());
                    return new ServerCall.Listener<>() {};
                }
                int tenant = 0;
                for (int i = 0; i < tokens.size(); i++) {
                    if (tokens.get(i).matches(presented)) {
                        tenant = i + 1;
                    }
                }
                if (tenant == 0) {
                    call.close(
                            Status.PERMISSION_DENIED.withDescription(
                                    what + " refused the bearer token: it is " + "not the switch's token"),
                            new Metadata());
                    return new ServerCall.Listener<>() {};
                }
                return Contexts.interceptCall(Context.current().withValue(CALLER, tenant), call, headers, next);
            }
        };
    }
}

package org.switchml.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Token files: created whole and private, refused when others may read them, one token per tenant on a server,
 * and the loopback check over every address of a name.
 */
@Timeout(60)
class TokenFilesTest {
    @TempDir
    Path dir;

    private Path file(final String name, final String text, final String mode) throws Exception {
        final Path p = Files.writeString(dir.resolve(name), text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
        return p;
    }

    @Test
    void aFileItsGroupOrOthersMayReadOrChangeIsRefusedAndAPrivateOneIsRead() throws Exception {
        for (final String mode : new String[] {"rw-r--r--", "rw-r-----", "rw--w----", "rw-----w-", "r--r--r--"}) {
            final Path p = file("t-" + mode.replace('-', '_'), "a-token-of-sixteen-chars\n", mode);
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BearerToken.read(p));
            assertTrue(
                    e.getMessage().contains("is not private (mode " + mode)
                            && e.getMessage().contains("chmod 600"),
                    e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> Tenants.read(p));
        }
        // Positive control: the same content, private.
        for (final String mode : new String[] {"rw-------", "r--------"}) {
            final Path p = file("ok-" + mode.replace('-', '_'), "# comment\n\n  a-token-of-sixteen-chars  \n", mode);
            assertEquals("file " + p, BearerToken.read(p).source());
            assertTrue(BearerToken.read(p).sameAs(BearerToken.of("a-token-of-sixteen-chars")));
        }
    }

    @Test
    void aNewFileIsWrittenWholeWithMode600AndConcurrentCreatorsAgreeOnOneToken() throws Exception {
        final Path p = dir.resolve("sub").resolve("token");
        final int creators = 8;
        final ExecutorService pool = Executors.newFixedThreadPool(creators);
        try {
            final List<Future<BearerToken>> got = new ArrayList<>();
            for (int i = 0; i < creators; i++) {
                got.add(pool.submit((Callable<BearerToken>) () -> BearerToken.readOrCreate(p)));
            }
            final BearerToken first = got.get(0).get(30, TimeUnit.SECONDS);
            for (final Future<BearerToken> f : got) {
                assertTrue(first.sameAs(f.get(30, TimeUnit.SECONDS)), "two creators saw different tokens");
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p.getParent())));
        try (var left = Files.list(p.getParent())) {
            assertEquals(List.of(p), left.toList(), "temporary files left behind");
        }
        assertTrue(Files.readString(p).matches("[0-9a-f]{48}\n"), Files.readString(p));
    }

    @Test
    void aServerFileHoldsOneTokenPerTenantAndTheCallerIsKnownByIt() throws Exception {
        final Path p =
                file("tenants", "# the rack's tenants\nalpha-token-0123456789\n\nbeta-token-0123456789\n", "rw-------");
        final Tenants t = Tenants.read(p);
        assertEquals(2, t.size());
        assertTrue(t.contains(BearerToken.of("beta-token-0123456789")));
        assertFalse(t.contains(BearerToken.of("gamma-token-0123456789")));
        // A client reads its first token only.
        assertTrue(BearerToken.read(p).sameAs(BearerToken.of("alpha-token-0123456789")));
        final Path twice = file("twice", "alpha-token-0123456789\nalpha-token-0123456789\n", "rw-------");
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tenants.read(twice));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("line 1"), e.getMessage());
        assertFalse(e.getMessage().contains("alpha-token"), "the message shows the token: " + e.getMessage());
        final Path empty = file("empty", "# nothing\n", "rw-------");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Tenants.read(empty))
                .getMessage()
                .contains("holds no token"));
    }

    @Test
    void loopbackMeansEveryAddressOfTheName() throws Exception {
        assertTrue(TlsFiles.isLoopback("127.0.0.1"));
        assertTrue(TlsFiles.isLoopback("::1"));
        assertFalse(TlsFiles.isLoopback("10.1.2.3"));
        assertFalse(TlsFiles.isLoopback("no-such-host.invalid"));
        // "localhost" resolves to loopback addresses only here (the positive control for names).
        assertTrue(TlsFiles.isLoopback("localhost"), "localhost resolves beyond loopback on this host");
        // A name with one loopback address among others is not loopback.
        final InetAddress lo = InetAddress.getLoopbackAddress();
        final InetAddress other = InetAddress.getByAddress(new byte[] {10, 1, 2, 3});
        assertTrue(TlsFiles.allLoopback(new InetAddress[] {lo}));
        assertFalse(TlsFiles.allLoopback(new InetAddress[] {lo, other}));
        assertFalse(TlsFiles.allLoopback(new InetAddress[] {other, lo}));
        assertFalse(TlsFiles.allLoopback(new InetAddress[0]));
    }
}

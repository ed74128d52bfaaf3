package org.switchml.auth;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Token files on disk: one token per line ({@code #} comments and blank lines are skipped), private to their
 * owner. A file that its group or others may read or write is refused, and a new one is written whole, with
 * mode 600 from its first byte, under its final name in one step.
 */
final class TokenFiles {
    /** Permissions that make a token file readable or replaceable by someone other than its owner. */
    private static final Set<PosixFilePermission> NOT_PRIVATE = EnumSet.of(
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE);

    private TokenFiles() {}

    /** A token line of a file: the token and its 1-based line number. */
    record Line(String token, int number) {}

    /**
     * The token lines of {@code file}, after checking that only its owner may read or write it.
     *
     * @throws IllegalArgumentException the file is missing, unreadable, not private, or holds no token
     */
    static List<Line> read(final Path file) {
        checkPrivate(file);
        final List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read the bearer token file " + file + ": " + e.getMessage(), e);
        }
        final List<Line> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            final String t = lines.get(i).trim();
            if (!t.isEmpty() && !t.startsWith("#")) {
                out.add(new Line(t, i + 1));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("the bearer token file " + file + " holds no token (one per line)");
        }
        return out;
    }

    /** Refuses a token file that its group or others may read or write (where the file system has modes). */
    static void checkPrivate(final Path file) {
        if (Files.getFileAttributeView(file, PosixFileAttributeView.class) == null) {
            return; // no POSIX modes here: the file system's own access control applies
        }
        final Set<PosixFilePermission> mode;
        try {
            mode = Files.getPosixFilePermissions(file);
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read the bearer token file " + file + ": " + e.getMessage(), e);
        }
        final Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(mode);
        open.retainAll(NOT_PRIVATE);
        if (!open.isEmpty()) {
            throw new IllegalArgumentException("the bearer token file " + file + " is not private (mode "
                    + PosixFilePermissions.toString(mode) + ": its group or others may read or change it); "
                    + "make it readable by its owner only: chmod 600 " + file);
        }
    }

    /**
     * Writes {@code text} to {@code file}, which must not exist: into a temporary file of the same directory
     * created with mode 600, flushed, then linked under its final name, so no reader ever sees a partial or
     * readable-by-others file. A missing directory is created readable by its owner only.
     *
     * @throws FileAlreadyExistsException someone else created {@code file} first
     */
    static void createPrivate(final Path file, final String text) throws IOException {
        final Path target = file.toAbsolutePath();
        final Path dir = target.getParent();
        final boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.isDirectory(dir)) {
            if (posix) {
                Files.createDirectories(
                        dir,
                        PosixFilePermissions.asFileAttribute(EnumSet.of(
                                PosixFilePermission.OWNER_READ,
                                PosixFilePermission.OWNER_WRITE,
                                PosixFilePermission.OWNER_EXECUTE)));
            } else {
                Files.createDirectories(dir);
            }
        }
        final Path tmp = posix
                ? Files.createTempFile(
                        dir,
                        "." + target.getFileName(),
                        ".new",
                        PosixFilePermissions.asFileAttribute(
                                EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE)))
                : Files.createTempFile(dir, "." + target.getFileName(), ".new");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                final ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            try {
                Files.createLink(target, tmp); // atomic, and fails when the name exists
            } catch (final UnsupportedOperationException noLinks) {
                if (Files.exists(target)) {
                    throw new FileAlreadyExistsException(target.toString());
                }
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}

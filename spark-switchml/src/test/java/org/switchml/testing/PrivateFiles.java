package org.switchml.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Files only their owner may read (mode 600), as token files must be. */
public final class PrivateFiles {
    private PrivateFiles() {}

    /** Writes {@code text} to {@code file} and makes it private to its owner; returns the file. */
    public static Path write(final Path file, final String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }
}

package org.switchml.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the repository's non-Java parts are, seen from a test (tests run in a module directory). */
public final class Repo {
    private Repo() {}

    /** The repository root: the first directory above the working directory that holds p4/tests. */
    public static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("p4/tests"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no p4/tests above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    /** p4/ of the repository. */
    public static Path p4Dir() {
        return root().resolve("p4");
    }
}

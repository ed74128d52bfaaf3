package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.DataFrameReader;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The input checks of the examples against Spark itself: a LIBSVM line is refused exactly when Spark's reader
 * fails on it, and the checks name the file and the line or record without failing a single task.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class InputsTest {
    @RegisterExtension
    static final LocalSpark spark = new LocalSpark(true);

    /** Lines Spark's libsvm reader takes, and lines it fails on (as a one-line file each). */
    private static final String[] GOOD = {
        "1 1:0.5 3:2",
        "-1 2:1e-3",
        "+1 1:1",
        "0",
        "1 1:0.5  3:2",
        "1.5e2 1:NaN",
        "1 1:1:2",
        "  2 4:1  ",
        "# a comment",
        ""
    };

    private static final String[] BAD = {
        "x 1:a 2:b", "1 a:1", "1 1:b", "1 3:1 2:1", "1 0:1", "1 1", "1\t1:2", "1 2:1 2:3", "1 -1:1"
    };

    @Test
    void aLineIsRefusedExactlyWhenSparksReaderFailsOnIt(@TempDir final Path dir) throws IOException {
        final List<String> disagree = new ArrayList<>();
        int file = 0;
        for (final String[] lines : new String[][] {GOOD, BAD}) {
            for (final String line : lines) {
                // A good first line: the reader needs one feature to size its vectors.
                final Path f = Files.writeString(dir.resolve("case" + file++ + ".txt"), "1 1:1\n" + line + "\n");
                boolean sparkReads;
                try {
                    spark.session().read().format("libsvm").load(f.toString()).count();
                    sparkReads = true;
                } catch (final Exception e) {
                    sparkReads = false;
                }
                final String problem = Inputs.libsvmProblem(line);
                if (sparkReads != (problem == null)) {
                    disagree.add("'" + line + "': Spark " + (sparkReads ? "reads it" : "fails") + ", the check says "
                            + (problem == null ? "fine" : problem));
                }
                if (lines == GOOD) {
                    assertNull(problem, "'" + line + "': " + problem);
                }
            }
        }
        assertTrue(disagree.isEmpty(), String.join("; ", disagree));
    }

    @Test
    void aLocalFileIsCheckedHereWithItsLineNumber(@TempDir final Path dir) throws IOException {
        final SparkSession session = spark.session();
        final Path f = Files.writeString(dir.resolve("data.txt"), "1 1:0.5 2:1\n# note\n0 2:1 1:3\n");
        final Cli.BadInput e =
                assertThrows(Cli.BadInput.class, () -> Inputs.checkLibsvm(session, "--libsvm", f.toString()));
        assertEquals(
                "--libsvm " + f + " line 3: '0 2:1 1:3': the indices are not ascending: 1 after 2", e.getMessage());
        // A directory as Spark writes one: its part files, not its hidden or _SUCCESS files.
        final Path d = Files.createDirectories(dir.resolve("parts"));
        Files.writeString(d.resolve("part-00000"), "1 1:1\n");
        Files.writeString(d.resolve("part-00001"), "0 1:1\n1 1:x\n");
        Files.writeString(d.resolve("_SUCCESS"), "not libsvm");
        Files.writeString(d.resolve(".part-00000.crc"), "not libsvm");
        final Cli.BadInput p =
                assertThrows(Cli.BadInput.class, () -> Inputs.checkLibsvm(session, "--libsvm", d.toString()));
        assertEquals(
                "--libsvm " + d.resolve("part-00001") + " line 2: '1 1:x': the value 'x' of index 1 is not a number",
                p.getMessage());
        Files.delete(d.resolve("part-00001"));
        Inputs.checkLibsvm(session, "--libsvm", d.toString());
    }

    /** Other file systems and compressed files: a Spark job names the file and the record, and no task fails. */
    @Test
    void theSparkSideNamesTheFileAndTheRecordWithoutAFailedTask(@TempDir final Path dir) throws IOException {
        final Path f = Files.writeString(dir.resolve("remote.txt"), "1 1:0.5\n0 2:1\nx 1:a 2:b\n1 1:2\n");
        final int failed = spark.failedTasks(() -> assertThrows(
                Cli.BadInput.class,
                () -> Inputs.checkLibsvmWithSpark(
                        spark.session(), "--libsvm", f.toUri().toString())));
        assertEquals(0, failed, "tasks failed");
        final Cli.BadInput e = assertThrows(
                Cli.BadInput.class,
                () -> Inputs.checkLibsvmWithSpark(
                        spark.session(), "--libsvm", f.toUri().toString()));
        assertEquals("--libsvm " + f + ": record 'x 1:a 2:b': the label 'x' is not a number", e.getMessage());
        // The positive control: Spark's own reader fails a task on the same file.
        assertTrue(spark.failedTasks(() -> assertThrows(
                        Exception.class,
                        () -> spark.session()
                                .read()
                                .format("libsvm")
                                .load(f.toString())
                                .count()))
                > 0);
    }

    @Test
    void aCsvRecordWithAnEmptyOrNonNumericFieldIsNamed(@TempDir final Path dir) throws IOException {
        final Path f = Files.writeString(dir.resolve("t.csv"), "id,x,y\na,1,2\nb,3.5,abc\n");
        final List<String> columns = List.of("id", "x", "y");
        final List<String> numeric = List.of("x", "y");
        final DataFrameReader reader = spark.session().read().option("header", true);
        final Cli.BadInput e = assertThrows(
                Cli.BadInput.class,
                () -> Inputs.checkCsv(reader.csv(f.toString()), "--csv", f.toString(), columns, numeric));
        assertEquals("--csv " + f + ": record 'b,3.5,abc': y 'abc' is not a number", e.getMessage());
        final Path g = Files.writeString(dir.resolve("u.csv"), "id,x,y\na,1,2\nc,,1\n");
        final int failed = spark.failedTasks(() -> {
            final Cli.BadInput empty = assertThrows(
                    Cli.BadInput.class,
                    () -> Inputs.checkCsv(reader.csv(g.toString()), "--csv", g.toString(), columns, numeric));
            assertEquals("--csv " + g + ": record 'c,,1': x is empty", empty.getMessage());
        });
        assertEquals(0, failed, "tasks failed");
        final Cli.BadInput missing = assertThrows(
                Cli.BadInput.class,
                () -> Inputs.checkCsv(
                        reader.csv(g.toString()), "--csv", g.toString(), List.of("id", "z", "w"), numeric));
        assertEquals("--csv " + g + ": no columns z, w; its columns: id, x, y", missing.getMessage());
    }

    @Test
    void localPathsAreCheckedAndOtherFileSystemsLeftToSpark(@TempDir final Path dir) {
        assertEquals(Paths.get("/tmp/x"), Inputs.local("/tmp/x"));
        assertEquals(Paths.get("/tmp/x y"), Inputs.local("file:///tmp/x%20y"));
        assertEquals(Paths.get("rel/x"), Inputs.local("rel/x"));
        assertNull(Inputs.local("hdfs://namenode:8020/data/x"));
        assertNull(Inputs.local("s3a://bucket/x"));
        final Path missing = dir.resolve("nothing-here");
        final Cli.BadInput e =
                assertThrows(Cli.BadInput.class, () -> Inputs.requireReadable("--libsvm", missing.toString()));
        assertEquals("--libsvm " + missing + ": no such file or directory", e.getMessage());
        Inputs.requireReadable("--libsvm", "hdfs://namenode:8020/data/x"); // Spark's to find out
        Inputs.requireReadable("--libsvm", dir.toString());
    }
}

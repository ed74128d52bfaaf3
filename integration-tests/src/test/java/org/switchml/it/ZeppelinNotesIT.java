package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Zeppelin note in {@code notebooks/}, run paragraph by paragraph in order against the built shaded jar, as
 * Zeppelin 0.12.1's Spark interpreter on Spark 4.0.1 runs it ({@link ZeppelinSparkInterpreter}): the note's
 * {@code %spark.conf} before the interpreter starts, with its {@code spark.jars} pointed at the built jar; its Scala
 * paragraphs in the Scala 2.13 REPL; its SQL through {@code spark.sql}. A paragraph fails the test, named by note
 * and index, when it does not compile, throws, is incomplete, or shows an empty table, or when a chart its config
 * draws names a column its result lacks.
 *
 * <p>Spark runs on {@code local-cluster[2,1,1024]}: two executor JVMs, so every REPL class a task needs reaches
 * them only the way it does under Zeppelin, from the driver's REPL output directory, and SwitchML sums between
 * two executors go through the embedded switch. The notes' forms get the small values of {@link #CI_FORMS}.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ZeppelinNotesIT {
    private static final long SEED = Long.getLong("switchml.seed", 20261202L);
    /** Zeppelin's default {@code zeppelin.spark.maxResult}: rows a table result renders at most. */
    private static final int MAX_RESULT = 1000;
    /** Values of the notes' forms for CI: small samples. A form a note reads without a value here fails it. */
    private static final Map<String, String> CI_FORMS = Map.of(
            "sampleSize", "2000",
            "maxIter", "10",
            "regParam", "0.01",
            "sizes", "1000,100000",
            "reps", "3",
            "seed", Long.toString(SEED));

    static Stream<Path> notes() throws IOException {
        final Path dir = Path.of(System.getProperty("switchml.it.notebooks", "../notebooks"));
        final List<Path> notes;
        try (Stream<Path> s = Files.list(dir)) {
            notes = s.filter(p -> p.getFileName().toString().endsWith(".zpln"))
                    .sorted()
                    .toList();
        }
        assertTrue(notes.size() >= 2, "expected the notes under " + dir.toAbsolutePath() + ", found " + notes);
        return notes.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notes")
    void everyParagraphRunsInOrder(final Path file) throws IOException, URISyntaxException {
        System.out.println("[it] seed " + SEED + " (-Dswitchml.seed=" + SEED + " repeats this run)");
        final ZeppelinNote note = ZeppelinNote.read(file);
        final String where = file.getFileName().toString();
        assertEquals("0.12.1", note.version(), where + ": written for another Zeppelin");
        final Map<String, String> forms = new HashMap<>(note.noteParams());
        forms.putAll(CI_FORMS);
        final NoteContext z = new NoteContext(forms, MAX_RESULT);
        final Path libraryJar = Path.of(System.getProperty("switchml.it.libraryJar"));
        assertTrue(Files.exists(libraryJar), libraryJar + " does not exist: run 'mvn verify', which builds it first");
        final Path zeppelinWork = Files.createDirectories(Path.of(System.getProperty("switchml.it.work"), "zeppelin"));
        final Path replOut = Files.createTempDirectory(zeppelinWork, where.replace(".zpln", "") + "-repl-classes-");
        final long start = System.nanoTime();
        try (ZeppelinSparkInterpreter interpreter =
                new ZeppelinSparkInterpreter(harnessConf(where), libraryJar, replOut, z)) {
            for (final ZeppelinNote.Paragraph p : note.paragraphs()) {
                final long t0 = System.nanoTime();
                z.startParagraph(p.label());
                final String output;
                try {
                    output = run(interpreter, p);
                } catch (final AssertionError | Exception e) {
                    // Exception: Spark's AnalysisException is a checked one, thrown unchecked from Scala.
                    throw new AssertionError(where + " " + p.label() + ": " + e.getMessage(), e);
                }
                System.out.println("[it] " + where + " " + p.label() + " in " + (System.nanoTime() - t0) / 1_000_000
                        + " ms" + (output.isBlank() ? "" : ":\n" + indent(output)));
                checkShows(where, p, z);
            }
            assertTrue(interpreter.session() != null, where + ": no paragraph started Spark");
            checkReplClassesServed(where, interpreter, replOut, libraryJar);
        }
        System.out.println("[it] " + where + ": " + note.paragraphs().size() + " paragraphs in "
                + (System.nanoTime() - start) / 1_000_000 + " ms, forms " + z.askedForms());
    }

    private static String run(final ZeppelinSparkInterpreter interpreter, final ZeppelinNote.Paragraph p)
            throws IOException {
        if (!p.enabled()) {
            return "(disabled: skipped, as Zeppelin's run-all skips it)";
        }
        return switch (p.interpreter()) {
            case "md" -> "";
            case "spark.conf" -> interpreter.configure(p);
            case "spark", "spark.spark" -> interpreter.scala(p);
            case "spark.sql" -> {
                interpreter.sql(p);
                yield "";
            }
            default ->
                throw new AssertionError("the harness runs %spark, %spark.sql, %spark.conf and %md "
                        + "paragraphs, not %" + p.interpreter());
        };
    }

    /** Every table a paragraph showed has rows; every chart of its config plots columns its table has. */
    private static void checkShows(final String where, final ZeppelinNote.Paragraph p, final NoteContext z) {
        final List<NoteContext.Shown> shown = z.shownBy(p.label());
        for (final NoteContext.Shown s : shown) {
            System.out.println("[it]   " + s.rows() + " rows:\n"
                    + indent(s.text().lines().limit(6).reduce("", (a, b) -> a + b + "\n")));
            assertTrue(s.rows() > 0, where + " " + p.label() + " showed an empty table: " + s.columns());
        }
        for (final ZeppelinNote.Chart c : p.charts()) {
            if (c.columns().isEmpty()) {
                continue;
            }
            assertTrue(
                    shown.stream().anyMatch(s -> s.columns().containsAll(c.columns())),
                    where + " " + p.label()
                            + " draws a " + c.mode() + " of " + c.columns() + " but showed "
                            + shown.stream().map(NoteContext.Shown::columns).toList());
        }
    }

    /**
     * The REPL's classes went to its output directory, the driver serves that to the executors, and the library
     * the REPL compiled and ran against is the built shaded jar.
     */
    private static void checkReplClassesServed(
            final String where, final ZeppelinSparkInterpreter interpreter, final Path replOut, final Path libraryJar)
            throws IOException, URISyntaxException {
        final SparkConf conf = interpreter.session().sparkContext().conf();
        assertTrue(conf.contains("spark.repl.class.uri"), where + ": the driver does not serve the REPL's classes");
        try (Stream<Path> s = Files.walk(replOut)) {
            assertTrue(s.anyMatch(f -> f.toString().endsWith(".class")), where + ": no REPL classes in " + replOut);
        }
        final Path loadedFrom = interpreter.libraryLocation();
        assertEquals(
                libraryJar.toRealPath(),
                loadedFrom.toRealPath(),
                where + ": the REPL loaded spark-switchml from " + loadedFrom + ", not from the built jar");
    }

    private static SparkConf harnessConf(final String note) {
        return new SparkConf()
                .setAppName("zeppelin " + note)
                .setMaster("local-cluster[2,1,1024]")
                .set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1")
                .set("spark.ui.enabled", "false")
                .set("spark.executor.memory", "512m")
                .set("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
                .set("spark.sql.shuffle.partitions", "4")
                // Executor JVMs start slowly on 2 busy cores: the first barrier stage waits for their slots.
                .set("spark.switchml.slotWaitTimeout", "180s");
    }

    private static String indent(final String text) {
        return text.strip()
                .lines()
                .map(l -> "[it]     " + l)
                .reduce((a, b) -> a + "\n" + b)
                .orElse("");
    }
}

package org.switchml.it;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Console;
import scala.jdk.javaapi.CollectionConverters;
import scala.tools.nsc.Settings;
import scala.tools.nsc.interpreter.IMain;
import scala.tools.nsc.interpreter.Results;
import scala.tools.nsc.interpreter.shell.ReplReporterImpl;

/**
 * A stand-in for Zeppelin's Spark interpreter group, for one note: {@code %spark.conf} sets properties before
 * the interpreter starts, {@code %spark} runs Scala in the Scala 2.13 REPL ({@link IMain}) with {@code spark},
 * {@code sc} and {@code z} bound, {@code %spark.sql} runs {@code spark.sql} and shows the result as {@code z.show}
 * does. The interpreter starts at the first {@code %spark} or {@code %spark.sql} paragraph.
 *
 * <p>The REPL is set up as a Spark interpreter sets up its own: class-based line wrappers
 * ({@code -Yrepl-class-based}), whose classes go to a directory ({@code -Yrepl-outdir}) that the driver serves to
 * the executors ({@code spark.repl.class.outputDir}); the library jar on the REPL's class path and on
 * {@code spark.jars}; the driver's thread context class loader is the REPL's, so results holding REPL classes
 * deserialize on the driver.
 */
final class ZeppelinSparkInterpreter implements AutoCloseable {
    private final SparkConf conf;
    private final Path libraryJar;
    private final Path replOut;
    private final NoteContext z;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ClassLoader callerLoader = Thread.currentThread().getContextClassLoader();
    private IMain intp;
    private SparkSession spark;

    /**
     * @param conf       the Spark properties the harness gives every note (master, addresses); the note's
     *                   {@code %spark.conf} adds to them
     * @param libraryJar the built shaded jar, in place of the path a note's {@code spark.jars} names
     * @param replOut    an empty directory for the REPL's classes
     * @param z          the note's {@code z}
     */
    ZeppelinSparkInterpreter(final SparkConf conf, final Path libraryJar, final Path replOut, final NoteContext z) {
        this.conf = conf;
        this.libraryJar = libraryJar;
        this.replOut = replOut;
        this.z = z;
    }

    /**
     * {@code %spark.conf}: {@code java.util.Properties} lines. {@code spark.*} keys go to the SparkConf, with
     * {@code spark.jars} pointed at the built jar (the note must name it spark-switchml.jar); upper-case keys
     * are the interpreter process's environment (e.g. {@code SPARK_HOME}), which the harness provides itself.
     *
     * @return the properties applied, for the log
     */
    String configure(final ZeppelinNote.Paragraph p) throws IOException {
        if (spark != null) {
            throw new AssertionError("%spark.conf after the Spark interpreter started; Zeppelin applies it only "
                    + "before, so it must come before every %spark and %spark.sql paragraph");
        }
        final Properties props = new Properties();
        props.load(new StringReader(p.body()));
        final List<String> applied = new ArrayList<>();
        for (final String key : props.stringPropertyNames().stream().sorted().toList()) {
            final String value = props.getProperty(key).strip();
            if (key.equals("spark.jars")) {
                // The note names the jar as its README says to copy it: spark-switchml.jar.
                if (!Path.of(value).getFileName().toString().equals("spark-switchml.jar")) {
                    throw new AssertionError("spark.jars names " + value + ", not spark-switchml.jar, the built jar "
                            + libraryJar.getFileName() + " copied under that name");
                }
                conf.set(key, libraryJar.toString());
                applied.add(key + "=" + libraryJar + " (the note names " + value + ")");
            } else if (key.startsWith("spark.")) {
                conf.set(key, value);
                applied.add(key + "=" + value);
            } else if (key.equals(key.toUpperCase())) {
                applied.add(key + " (interpreter environment, provided by the harness)");
            } else {
                throw new AssertionError(key + " is neither a Spark property nor an environment variable");
            }
        }
        return String.join("\n", applied);
    }

    /** {@code %spark}: interprets the paragraph; fails with its output on a compile error, an exception or incomplete code. */
    String scala(final ZeppelinNote.Paragraph p) {
        start();
        out.reset();
        final Results.Result r = Console.withOut(out, () -> intp.interpret(p.body()));
        final String output = out.toString(StandardCharsets.UTF_8);
        if (r != Results.Success$.MODULE$) {
            throw new AssertionError("failed (" + r + "):\n" + tail(output, 60));
        }
        return output;
    }

    /** {@code %spark.sql}: runs the statement and shows its result as {@code z.show} does. */
    void sql(final ZeppelinNote.Paragraph p) {
        start();
        z.show(spark.sql(p.body()));
    }

    private void start() {
        if (intp != null) {
            return;
        }
        try {
            Files.createDirectories(replOut);
        } catch (final IOException e) {
            throw new IllegalStateException("cannot create " + replOut, e);
        }
        final Settings settings = new Settings();
        final String classPath = System.getProperty("java.class.path") + File.pathSeparator + libraryJar;
        final var parsed = settings.processArguments(
                CollectionConverters.asScala(List.of(
                                "-Yrepl-class-based", "-Yrepl-outdir", replOut.toString(), "-classpath", classPath))
                        .toList(),
                true);
        if (!(Boolean) parsed._1()) {
            throw new IllegalStateException("Scala settings refused: " + parsed._2());
        }
        final PrintWriter replWriter = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        intp = new IMain(settings, new ReplReporterImpl(settings, replWriter));
        if (!intp.initializeCompiler()) {
            throw new IllegalStateException(
                    "the Scala compiler did not start:\n" + out.toString(StandardCharsets.UTF_8));
        }
        Thread.currentThread().setContextClassLoader(intp.classLoader());
        conf.set("spark.repl.class.outputDir", replOut.toString());
        spark = SparkSession.builder().config(conf).getOrCreate();
        // Spark's INFO lines go to Zeppelin's interpreter log, not to the paragraph; here they would bury the output.
        spark.sparkContext().setLogLevel("WARN");
        bind("spark", SparkSession.class.getName(), spark);
        bind("sc", SparkContext.class.getName(), spark.sparkContext());
        bind("z", NoteContext.class.getName(), z);
    }

    private void bind(final String name, final String type, final Object value) {
        // Transient: a closure that captures a line's wrapper must not drag the session or z to the executors.
        final Results.Result r = intp.bind(
                name,
                type,
                value,
                CollectionConverters.asScala(List.of("@transient")).toList());
        if (r != Results.Success$.MODULE$) {
            throw new IllegalStateException("cannot bind " + name + ":\n" + out.toString(StandardCharsets.UTF_8));
        }
    }

    /** The application's Spark session, once started. */
    SparkSession session() {
        return spark;
    }

    /** Where the REPL loads spark-switchml's classes from. */
    Path libraryLocation() throws URISyntaxException {
        try {
            final Class<?> c = Class.forName("org.switchml.spark.SwitchMLAggregator", false, intp.classLoader());
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (final ClassNotFoundException e) {
            throw new AssertionError("the REPL cannot load spark-switchml", e);
        }
    }

    private static String tail(final String text, final int lines) {
        final String[] all = text.split("\n");
        return String.join("\n", Arrays.copyOfRange(all, Math.max(0, all.length - lines), all.length));
    }

    @Override
    public void close() {
        try {
            if (spark != null) {
                spark.stop();
            }
        } finally {
            if (intp != null) {
                intp.close();
            }
            Thread.currentThread().setContextClassLoader(callerLoader);
        }
    }
}

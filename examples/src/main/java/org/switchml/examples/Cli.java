package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

/**
 * The example programs' command lines, parsed with picocli the same way everywhere: {@code --help}
 * prints the usage and exits 0; a usage error prints one line naming the flag and its value, then
 * {@code Try --help.}, and exits {@value #EXIT_USAGE}, before any Spark or network resource is made.
 * Parsing never calls {@code System.exit}, so tests can check the exit code.
 *
 * <p>Once running, a program answers input it cannot use ({@link BadInput}: a missing or malformed file, a
 * column the file does not have) with one line naming the file, the line or record, or the column, and exit
 * code {@value #EXIT_USAGE}; any other failure with one line and {@value #EXIT_FAILED}. {@code --verbose}
 * adds the whole stack trace.
 */
final class Cli {
    /** Exit code of a bad command line, and of input the program cannot use. */
    static final int EXIT_USAGE = 2;
    /** {@link #parse} result: the command line is good, run the program. */
    static final int PROCEED = -1;

    private Cli() {}

    /** Exit code of a run that failed. */
    static final int EXIT_FAILED = 1;

    /**
     * Input a program cannot use. The message is the whole line the user sees, so it names the file and the
     * line or record, or the column, and what is wrong.
     */
    static final class BadInput extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadInput(final String message) {
            super(message);
        }

        BadInput(final String message, final Throwable cause) {
            super(message, cause);
        }
    }

    /** A program's body in a Spark session; returns its exit code. */
    interface SparkJob {
        int run(SparkSession spark) throws Exception;
    }

    /** A program's body; returns its exit code. */
    interface Body {
        int run() throws Exception;
    }

    /**
     * Runs {@code job} in {@code spark}, or, when that is null, in a session of its own from spark-submit's
     * configuration ({@code local[2]}, no UI and quiet logs when it gives none), stopped at the end. A failure
     * is one line as {@link #guard} says.
     */
    static int inSpark(
            final String name,
            final SparkSession spark,
            final PrintStream out,
            final PrintStream err,
            final boolean verbose,
            final SparkJob job) {
        return inSpark(name, spark, new SparkConf().setIfMissing("spark.master", "local[2]"), out, err, verbose, job);
    }

    /** As {@link #inSpark(String, SparkSession, PrintStream, PrintStream, boolean, SparkJob)}, from {@code conf}. */
    static int inSpark(
            final String name,
            final SparkSession spark,
            final SparkConf conf,
            final PrintStream out,
            final PrintStream err,
            final boolean verbose,
            final SparkJob job) {
        return guard(name, out, err, verbose, () -> {
            final SparkSession session = spark != null
                    ? spark
                    : SparkSession.builder()
                            .config(conf.setIfMissing("spark.app.name", "switchml-" + name)
                                    .setIfMissing("spark.ui.enabled", "false")
                                    .setIfMissing("spark.log.level", "WARN"))
                            .getOrCreate();
            try {
                if (spark == null) {
                    // After Spark set up its logging, which would undo it.
                    Configurator.setRootLevel(Level.WARN);
                }
                return job.run(session);
            } finally {
                if (spark == null) {
                    session.stop();
                }
            }
        });
    }

    /**
     * Runs {@code body}. Input it cannot use ({@link BadInput}, or Spark's analysis of a query against the input:
     * a path or column that is not there) is one line {@code name: message} on {@code err} and exit code
     * {@value #EXIT_USAGE}; any other failure one line and {@value #EXIT_FAILED}. With {@code verbose} the stack
     * trace follows the line.
     */
    static int guard(
            final String name, final PrintStream out, final PrintStream err, final boolean verbose, final Body body) {
        try {
            return body.run();
        } catch (final Exception e) {
            out.flush();
            err.println(name + ": " + oneLine(e));
            if (verbose) {
                e.printStackTrace(err);
            }
            return badInput(e) ? EXIT_USAGE : EXIT_FAILED;
        }
    }

    /** Whether {@code e} says the input cannot be used (as opposed to a run that failed). */
    static boolean badInput(final Throwable e) {
        return e instanceof BadInput || e instanceof AnalysisException;
    }

    /** {@code e} in one line: its own message, Spark's without the query plan, else the first line of the first message. */
    static String oneLine(final Throwable e) {
        if (e instanceof BadInput) {
            return firstLine(e.getMessage());
        }
        if (e instanceof AnalysisException a) {
            return firstLine(a.getSimpleMessage());
        }
        Throwable t = e;
        while ((t.getMessage() == null || t.getMessage().isBlank()) && t.getCause() != null) {
            t = t.getCause();
        }
        // Spark's exceptions say what failed in their message; a JDK one needs its class (NoSuchFileException: x).
        final boolean spark = t.getClass().getName().startsWith("org.apache.spark.");
        return firstLine(spark && t.getMessage() != null ? t.getMessage() : t.toString());
    }

    private static String firstLine(final String s) {
        if (s == null) {
            return "";
        }
        final int nl = s.indexOf('\n');
        return (nl < 0 ? s : s.substring(0, nl)).strip();
    }

    /** A picocli command whose options need checks across options after parsing. */
    interface Validated {
        /** Throws {@link ParameterException} naming the offending flags. */
        void validate(CommandLine commandLine);
    }

    /**
     * A mixin whose options' defaults the command that holds it chooses, so that one declaration serves programs
     * with different defaults. {@link #parse} hands them to picocli, which applies them through the option setters
     * (the same checks as a value given on the command line) and shows them for {@code ${DEFAULT-VALUE}} in --help.
     */
    interface Defaults {
        /** The default of {@code option} (its longest name) as it would be written on the command line; null for none. */
        String defaultValue(String option);
    }

    /** The default a {@link Defaults} mixin chooses for {@code arg}; null for any other option (picocli's own then). */
    private static String mixinDefault(final ArgSpec arg) throws Exception {
        return arg instanceof OptionSpec o && arg.scope() != null && arg.scope().get() instanceof Defaults d
                ? d.defaultValue(o.longestName())
                : null;
    }

    /**
     * Parses {@code args} into {@code command}'s annotated fields and setters. Returns {@link #PROCEED}
     * when the program should run, 0 after printing the usage to {@code out}, or {@link #EXIT_USAGE}
     * after printing the error as {@code name: message} and {@code Try --help.} to {@code err}.
     */
    static int parse(
            final String name,
            final Object command,
            final String[] args,
            final PrintStream out,
            final PrintStream err) {
        // Wide enough for the descriptions' own line breaks.
        final CommandLine cl =
                new CommandLine(command).setUsageHelpWidth(120).setDefaultValueProvider(Cli::mixinDefault);
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested()) {
                cl.usage(new PrintWriter(out, true, StandardCharsets.UTF_8));
                return 0;
            }
            if (cl.isVersionHelpRequested()) {
                cl.printVersionHelp(new PrintWriter(out, true, StandardCharsets.UTF_8));
                return 0;
            }
            if (command instanceof Validated v) {
                v.validate(cl);
            }
            return PROCEED;
        } catch (final ParameterException e) {
            err.println(name + ": " + e.getMessage());
            err.println("Try --help.");
            return EXIT_USAGE;
        }
    }

    /** {@code --version}: the program's name and the build's version (one place: the root pom's revision). */
    static final class Version implements CommandLine.IVersionProvider {
        @CommandLine.Spec
        CommandSpec spec;

        @Override
        public String[] getVersion() {
            return new String[] {spec.name() + " " + org.switchml.Version.current()};
        }
    }

    /** A usage error of {@code spec}'s command line (for option setters and {@link Validated#validate}). */
    static ParameterException usage(final CommandSpec spec, final String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** A usage error of {@code cl}. */
    static ParameterException usage(final CommandLine cl, final String message) {
        return new ParameterException(cl, message);
    }

    /** {@code v}, else a usage error {@code FLAG must be >= MIN, got V} (for option setters). */
    static int atLeast(final CommandSpec spec, final String flag, final int v, final int min) {
        if (v < min) {
            throw usage(spec, flag + " must be >= " + min + ", got " + v);
        }
        return v;
    }

    /** {@code v}, else (negative or NaN) a usage error {@code FLAG must be >= 0, got V}. */
    static double nonNegative(final CommandSpec spec, final String flag, final double v) {
        if (!(v >= 0)) {
            throw usage(spec, flag + " must be >= 0, got " + v);
        }
        return v;
    }

    /** {@code v}, else (outside [0, 1], or NaN) a usage error {@code FLAG must be in [0, 1], got V}. */
    static double closedUnitInterval(final CommandSpec spec, final String flag, final double v) {
        if (!(v >= 0 && v <= 1)) {
            throw usage(spec, flag + " must be in [0, 1], got " + v);
        }
        return v;
    }

    /** {@code v}, else (0, 1 or outside, or NaN) a usage error {@code FLAG must be in (0, 1), got V}: a share held out. */
    static double openUnitInterval(final CommandSpec spec, final String flag, final double v) {
        if (!(v > 0 && v < 1)) {
            throw usage(spec, flag + " must be in (0, 1), got " + v);
        }
        return v;
    }

    /** {@code v}, else a usage error {@code FLAG must be A, B or C, got 'V'}. */
    static String oneOf(final CommandSpec spec, final String flag, final String v, final String... allowed) {
        final List<String> all = List.of(allowed);
        if (!all.contains(v)) {
            final String choices = all.size() == 1
                    ? all.get(0)
                    : String.join(", ", all.subList(0, all.size() - 1)) + " or " + all.get(all.size() - 1);
            throw usage(spec, flag + " must be " + choices + ", got '" + v + "'");
        }
        return v;
    }

    /**
     * Ends the JVM with {@code code} unless it is 0; a run that succeeded returns from {@code main} instead, as
     * any application's main does under spark-submit.
     */
    static void exitOnFailure(final int code) {
        if (code != 0) {
            System.exit(code);
        }
    }

    /** An I/O failure reading {@code what} as input the program cannot use. */
    static BadInput unreadable(final String what, final IOException e) {
        return new BadInput(what + ": " + (e.getMessage() == null ? e.toString() : firstLine(e.toString())), e);
    }
}

package org.switchml.examples;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * The example programs' command lines, parsed with picocli the same way everywhere: {@code --help}
 * prints the usage and exits 0; a usage error prints one line naming the flag and its value, then
 * {@code Try --help.}, and exits {@value #EXIT_USAGE}, before any Spark or network resource is made.
 * Parsing never calls {@code System.exit}, so tests can check the exit code.
 */
final class Cli {
    /** Exit code of a bad command line. */
    static final int EXIT_USAGE = 2;
    /** {@link #parse} result: the command line is good, run the program. */
    static final int PROCEED = -1;

    private Cli() {
    }

    /** Exit code of a run that failed. */
    static final int EXIT_FAILED = 1;

    /** A program's body in a Spark session; returns its exit code. */
    interface SparkJob {
        int run(SparkSession spark) throws IOException;
    }

    /**
     * Runs {@code job} in {@code spark}, or, when that is null, in a session of its own from spark-submit's
     * configuration ({@code local[2]}, no UI and quiet logs when it gives none), stopped at the end. A failure
     * is one line {@code name: error} on {@code err} and exit code {@value #EXIT_FAILED}.
     */
    static int inSpark(final String name, final SparkSession spark, final PrintStream out, final PrintStream err,
                       final SparkJob job) {
        final SparkSession session = spark != null ? spark : SparkSession.builder().config(new SparkConf()
                .setAppName("switchml-" + name)
                .setIfMissing("spark.master", "local[2]")
                .setIfMissing("spark.ui.enabled", "false")
                .setIfMissing("spark.log.level", "WARN")).getOrCreate();
        try {
            if (spark == null) {
                // After Spark set up its logging, which would undo it.
                Configurator.setRootLevel(Level.WARN);
            }
            return job.run(session);
        } catch (final IOException | RuntimeException e) {
            out.flush();
            err.println(name + ": " + e);
            return EXIT_FAILED;
        } finally {
            if (spark == null) {
                session.stop();
            }
        }
    }

    /** A picocli command whose options need checks across options after parsing. */
    interface Validated {
        /** Throws {@link ParameterException} naming the offending flags. */
        void validate(CommandLine commandLine);
    }

    /**
     * Parses {@code args} into {@code command}'s annotated fields and setters. Returns {@link #PROCEED}
     * when the program should run, 0 after printing the usage to {@code out}, or {@link #EXIT_USAGE}
     * after printing the error as {@code name: message} and {@code Try --help.} to {@code err}.
     */
    static int parse(final String name, final Object command, final String[] args, final PrintStream out,
                     final PrintStream err) {
        // Wide enough for the descriptions' own line breaks.
        final CommandLine cl = new CommandLine(command).setUsageHelpWidth(120);
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

    /** A usage error of {@code spec}'s command line (for option setters and {@link Validated#validate}). */
    static ParameterException usage(final CommandSpec spec, final String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** A usage error of {@code cl}. */
    static ParameterException usage(final CommandLine cl, final String message) {
        return new ParameterException(cl, message);
    }
}

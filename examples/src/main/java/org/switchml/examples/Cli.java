package org.switchml.examples;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

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

package org.switchml;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Properties;

/**
 * This build's version, and the jar's {@code Main-Class}: {@code java -jar spark-switchml-VERSION.jar} says what
 * the jar is and how to use it (the jar is a library and a Spark plugin, not a program). Needs nothing but the JDK.
 */
public final class Version {
    /** Exit code of an argument {@link #main} does not know. */
    static final int EXIT_USAGE = 2;

    private static final Properties BUILD = load();

    private Version() {}

    private static Properties load() {
        final Properties p = new Properties();
        try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (final IOException e) {
            // Left empty: current() says "unknown".
        }
        return p;
    }

    /** The version of spark-switchml, e.g. {@code 0.1.0}; {@code unknown} when the build's version file is missing. */
    public static String current() {
        return BUILD.getProperty("version", "unknown");
    }

    /** The Spark version this build is compiled against, e.g. {@code 4.0.1}. */
    public static String spark() {
        return BUILD.getProperty("spark.version", "unknown");
    }

    /** Prints what the jar is and how to use it; {@code --version} prints the version alone. */
    public static void main(final String[] args) {
        final int code = run(args, System.out, System.err);
        if (code != 0) {
            System.exit(code);
        }
    }

    /** {@link #main} without the exit; returns the exit code. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        if (args.length == 1 && args[0].equals("--version")) {
            out.println(current());
            return 0;
        }
        if (args.length > 1 || (args.length == 1 && !args[0].equals("--help") && !args[0].equals("-h"))) {
            err.println("spark-switchml: unknown argument '" + String.join(" ", args)
                    + "': the jar takes only --help or " + "--version");
            return EXIT_USAGE;
        }
        final String jar = jarName();
        out.println("spark-switchml " + current() + ": SwitchML in-network aggregation for Apache Spark " + spark()
                + " (Scala " + BUILD.getProperty("scala.binary.version", "?") + ").");
        out.println("This jar is a library and a Spark plugin, not a program. Give it to spark-submit:");
        out.println("  spark-submit --jars " + jar + " --conf spark.plugins=org.switchml.spark.SwitchMLPlugin \\");
        out.println("    --class your.App your-app.jar");
        out.println("or, from a checkout, bin/switchml-submit, which adds both. A switch shared by a rack:");
        out.println("bin/switchml-switch (software) or bin/switchml-controller (beside a P4 switch).");
        out.println("Licensed under the Apache License 2.0: META-INF/LICENSE and META-INF/NOTICE in this jar.");
        return 0;
    }

    /** The file name of the jar this class was loaded from, or the name the build gives it. */
    private static String jarName() {
        final CodeSource source = Version.class.getProtectionDomain().getCodeSource();
        if (source != null && source.getLocation() != null) {
            try {
                final Path p = Path.of(source.getLocation().toURI());
                if (p.getFileName() != null && p.getFileName().toString().endsWith(".jar")) {
                    return p.getFileName().toString();
                }
            } catch (final URISyntaxException | IllegalArgumentException e) {
                // Fall through to the built name.
            }
        }
        return "spark-switchml-" + current() + ".jar";
    }
}

package org.switchml.examples;

import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * How the training examples that read LIBSVM or generate their data lay out the input: {@code --partitions} of the
 * cached input and {@code --features} of generated data, declared and checked here once; each program chooses the
 * default number of features ({@link Cli.Defaults}).
 */
final class DataOptions implements Cli.Defaults {
    /** The program's spec: a usage error is in its name. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    /** Partitions of the cached input. */
    int partitions = 4;
    /** Features of generated data. */
    int features;

    private final Map<String, String> defaults;

    /** The options with {@code features} generated features by default. */
    DataOptions(final int features) {
        this.features = features;
        defaults = Map.of("--features", Integer.toString(features));
    }

    @Option(names = "--features", paramLabel = "N", description = "generated: features (default ${DEFAULT-VALUE})")
    void features(final int v) {
        features = Cli.atLeast(spec, "--features", v, 1);
    }

    @Option(names = "--partitions", paramLabel = "P", description = "partitions of the cached input (default 4)")
    void partitions(final int v) {
        partitions = Cli.atLeast(spec, "--partitions", v, 1);
    }

    @Override
    public String defaultValue(final String option) {
        return defaults.get(option);
    }
}

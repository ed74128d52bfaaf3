package org.switchml.examples;

import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The params of the fit every training example takes, {@code --max-iter} and {@code --reg-param}: declared and
 * checked here once, with the defaults each program chooses ({@link Cli.Defaults}).
 */
final class FitOptions implements Cli.Defaults {
    /** The program's spec: a usage error is in its name. */
    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    /** MLlib's maxIter. */
    int maxIter;
    /** MLlib's regParam. */
    double regParam;

    private final Map<String, String> defaults;

    /** The options with these defaults. */
    FitOptions(final int maxIter, final double regParam) {
        this.maxIter = maxIter;
        this.regParam = regParam;
        defaults = Map.of("--max-iter", Integer.toString(maxIter), "--reg-param", plain(regParam));
    }

    @Option(names = "--max-iter", paramLabel = "N", description = "maxIter (default ${DEFAULT-VALUE})")
    void maxIter(final int v) {
        maxIter = Cli.atLeast(spec, "--max-iter", v, 0);
    }

    @Option(names = "--reg-param", paramLabel = "R", description = "regParam (default ${DEFAULT-VALUE})")
    void regParam(final double v) {
        regParam = Cli.nonNegative(spec, "--reg-param", v);
    }

    @Override
    public String defaultValue(final String option) {
        return defaults.get(option);
    }

    /** {@code v} as a user writes it: 0, not 0.0. */
    private static String plain(final double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }
}

package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Draws Spark on the emulated rack (examples/testbed/run-spark.sh, docs/testbed.md): the LogisticRegression fit
 * time against the number of executors, one line per design (the median of its repetitions).
 *
 * <p>The CSV needs a header with at least the columns design, n, coefficients and fit_seconds; all rows must be
 * of one problem size (coefficients).
 */
@Command(
        name = "rack-fit-plot",
        mixinStandardHelpOptions = true,
        versionProvider = Cli.Version.class,
        sortOptions = false,
        description = {
            "Plots LogisticRegression fit time vs executors from run-spark.sh's CSV into a PNG.",
            "Exit codes: 0 ok, 1 the PNG could not be written, 2 bad flags or a CSV it cannot plot (missing,",
            "malformed, several problem sizes)."
        })
public final class RackFitPlot implements Cli.Validated {
    /** Name in messages. */
    static final String NAME = "rack-fit-plot";

    private static final List<String> COLUMNS = List.of("design", "n", "coefficients", "fit_seconds");

    @Parameters(index = "0", paramLabel = "CSV", description = "run-spark.sh's results (--out)")
    Path csv;

    @CommandLine.Mixin
    PlotImage image;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    /** Runs the command line; exits with its code. */
    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Parses and plots; returns the exit code. Every error is one line on {@code err}. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        System.setProperty("java.awt.headless", "true");
        final RackFitPlot p = new RackFitPlot();
        final int parsed = Cli.parse(NAME, p, args, out, err);
        return parsed != Cli.PROCEED ? parsed : Cli.guard(NAME, out, err, p.verbose, () -> p.plot(out));
    }

    @Override
    public void validate(final CommandLine cl) {
        image.check(cl);
    }

    /** One fit: its design, executors, problem size and seconds. */
    record Fit(String design, int n, long coefficients, double seconds) {}

    /** Reads the CSV and writes the PNG; a CSV it cannot plot is a {@link Cli.BadInput}. */
    int plot(final PrintStream out) throws IOException {
        final XYChartBuilder builder = image.chart();
        final List<Fit> fits;
        try {
            fits = read(csv);
        } catch (final RackPlot.BadCsv e) {
            throw new Cli.BadInput(e.getMessage());
        }
        final TreeSet<Long> sizes = new TreeSet<>();
        fits.forEach(f -> sizes.add(f.coefficients()));
        if (sizes.size() > 1) {
            throw new Cli.BadInput(csv + ": rows of several problem sizes " + sizes + ": plot one per CSV");
        }
        final TreeMap<String, TreeMap<Integer, List<Double>>> series = series(fits);
        final XYChart chart = builder.title(
                        String.format(Locale.ROOT, "LogisticRegression on the rack, %,d coefficients", sizes.first()))
                .xAxisTitle("executors n")
                .yAxisTitle("fit time (s)")
                .build();
        chart.getStyler().setLegendPosition(LegendPosition.InsideNW);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisDecimalPattern("0");
        for (final Map.Entry<String, TreeMap<Integer, List<Double>>> e : series.entrySet()) {
            final List<Double> x = new ArrayList<>();
            final List<Double> y = new ArrayList<>();
            for (final Map.Entry<Integer, List<Double>> p : e.getValue().entrySet()) {
                x.add((double) p.getKey());
                y.add(RackPlot.median(p.getValue()));
            }
            chart.addSeries(e.getKey(), x, y).setMarker(SeriesMarkers.CIRCLE);
        }
        image.write(chart);
        out.printf(Locale.ROOT, "rack-fit-plot: %s: %d fits, %d designs%n", image.out, fits.size(), series.size());
        return RackPlot.EXIT_OK;
    }

    /** Fit times by design and n. */
    static TreeMap<String, TreeMap<Integer, List<Double>>> series(final List<Fit> fits) {
        final TreeMap<String, TreeMap<Integer, List<Double>>> out = new TreeMap<>();
        for (final Fit f : fits) {
            out.computeIfAbsent(f.design(), d -> new TreeMap<>())
                    .computeIfAbsent(f.n(), n -> new ArrayList<>())
                    .add(f.seconds());
        }
        return out;
    }

    /** Reads the CSV; every problem names the file, the line and the column. */
    static List<Fit> read(final Path file) throws IOException, RackPlot.BadCsv {
        final List<Fit> fits = new ArrayList<>();
        for (final RackPlot.Field[] f : RackPlot.columns(file, COLUMNS)) {
            fits.add(new Fit(
                    f[0].text(),
                    (int) f[1].number(1, 4096),
                    (long) f[2].number(1, Long.MAX_VALUE),
                    f[3].number(0, Double.MAX_VALUE)));
        }
        return fits;
    }
}

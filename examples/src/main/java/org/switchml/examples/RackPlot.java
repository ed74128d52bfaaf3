package org.switchml.examples;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Draws the emulated rack's sweep (examples/testbed/sweep.sh, docs/testbed.md): goodput per worker against
 * the number of workers for each design, the median of its repetitions, for one vector size, with the
 * line rate R and the ring allreduce's bound R·n/(2(n−1)) drawn in.
 *
 * <p>The CSV needs a header with at least the columns design, n, elements, rate_bits, loss_pct,
 * goodput_gbps_per_worker and exact; rows that were not exact are left out (and counted on stderr). Rows with
 * loss are a design of their own ("switchml, 1% loss").
 */
@Command(
        name = "rack-plot",
        mixinStandardHelpOptions = true,
        versionProvider = Cli.Version.class,
        sortOptions = false,
        description = {
            "Plots goodput per worker vs workers from the rack sweep's CSV into a PNG.",
            "Exit codes: 0 ok, 1 the PNG could not be written, 2 bad flags or a CSV it cannot plot (missing,",
            "malformed, no exact row of the size)."
        })
public final class RackPlot implements Cli.Validated {
    static final int EXIT_OK = 0;
    /** A CSV that is missing, malformed or has nothing to plot: bad input, as a bad flag. */
    static final int EXIT_BAD_DATA = Cli.EXIT_USAGE;
    /** Name in messages. */
    static final String NAME = "rack-plot";

    private static final List<String> COLUMNS =
            List.of("design", "n", "elements", "rate_bits", "loss_pct", "goodput_gbps_per_worker", "exact");

    @Parameters(index = "0", paramLabel = "CSV", description = "the sweep's results (sweep.sh --out)")
    Path csv;

    @CommandLine.Mixin
    PlotImage image;

    @Option(
            names = "--elements",
            paramLabel = "N",
            description = "the vector size to plot, in floats per worker"
                    + " (default: 4194304 when present, else the largest)")
    Long elements;

    @Option(names = "--verbose", description = "on failure, the whole stack trace after the one-line message")
    boolean verbose;

    /** Runs the command line; exits with its code. */
    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Parses and plots; returns the exit code. Every error is one line on {@code err}. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        System.setProperty("java.awt.headless", "true");
        final RackPlot p = new RackPlot();
        final int parsed = Cli.parse(NAME, p, args, out, err);
        return parsed != Cli.PROCEED ? parsed : Cli.guard(NAME, out, err, p.verbose, () -> p.plot(out, err));
    }

    @Override
    public void validate(final CommandLine cl) {
        image.check(cl);
    }

    /** Reads the CSV and writes the PNG; a CSV it cannot plot is a {@link Cli.BadInput}. */
    int plot(final PrintStream out, final PrintStream err) throws IOException {
        final XYChartBuilder builder = image.chart();
        final List<Row> rows;
        try {
            rows = read(csv);
        } catch (final BadCsv e) {
            throw new Cli.BadInput(e.getMessage());
        }
        final long size = elements != null ? elements : defaultSize(rows);
        final List<Row> chosen = new ArrayList<>();
        int inexact = 0;
        for (final Row r : rows) {
            if (r.elements == size) {
                if (r.exact) {
                    chosen.add(r);
                } else {
                    inexact++;
                }
            }
        }
        if (inexact > 0) {
            err.println(
                    "rack-plot: left out " + inexact + " row(s) of " + size + " elements whose result was not exact");
        }
        if (chosen.isEmpty()) {
            throw new Cli.BadInput(csv + ": no exact row with elements=" + size);
        }
        final TreeSet<Long> rates = new TreeSet<>();
        for (final Row r : chosen) {
            rates.add(r.rateBits);
        }
        if (rates.size() > 1) {
            throw new Cli.BadInput(
                    csv + ": rows of " + size + " elements have several rates " + rates + ": plot one rate per CSV");
        }
        image.write(chart(builder, chosen, size, rates.first()));
        out.printf(
                Locale.ROOT,
                "rack-plot: %s: %d rows of %d elements, %d designs%n",
                image.out,
                chosen.size(),
                size,
                series(chosen).size());
        return EXIT_OK;
    }

    /** 2^22 floats when the CSV has them, else its largest size. */
    static long defaultSize(final List<Row> rows) {
        long largest = 0;
        for (final Row r : rows) {
            if (r.elements == 1L << 22) {
                return r.elements;
            }
            largest = Math.max(largest, r.elements);
        }
        return largest;
    }

    private XYChart chart(final XYChartBuilder builder, final List<Row> rows, final long size, final long rateBits) {
        final XYChart chart = builder.title(String.format(
                        Locale.ROOT,
                        "Allreduce of %s floats per worker, links at %s",
                        sizeLabel(size),
                        rateLabel(rateBits)))
                .xAxisTitle("workers n")
                .yAxisTitle("goodput per worker (Gbit/s)")
                .build();
        chart.getStyler().setLegendPosition(LegendPosition.InsideSW);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setXAxisDecimalPattern("0");
        chart.getStyler().setYAxisDecimalPattern("0.000");
        final double r = rateBits / 1e9;
        final TreeSet<Integer> ns = new TreeSet<>();
        for (final Row row : rows) {
            ns.add(row.n);
        }
        final int lo = Math.max(1, ns.first());
        final int hi = Math.max(lo + 1, ns.last());
        final XYSeries line = chart.addSeries("line rate R", new double[] {lo, hi}, new double[] {r, r});
        line.setMarker(SeriesMarkers.NONE);
        line.setLineStyle(SeriesLines.DASH_DASH);
        final List<Double> bx = new ArrayList<>();
        final List<Double> by = new ArrayList<>();
        for (int n = Math.max(2, lo); n <= hi; n++) {
            bx.add((double) n);
            by.add(r * n / (2.0 * (n - 1)));
        }
        if (!bx.isEmpty()) {
            final XYSeries ring = chart.addSeries("ring bound R·n/(2(n−1))", bx, by);
            ring.setMarker(SeriesMarkers.NONE);
            ring.setLineStyle(SeriesLines.DOT_DOT);
        }
        for (final Map.Entry<String, TreeMap<Integer, List<Double>>> e :
                series(rows).entrySet()) {
            final List<Double> x = new ArrayList<>();
            final List<Double> y = new ArrayList<>();
            for (final Map.Entry<Integer, List<Double>> p : e.getValue().entrySet()) {
                x.add((double) p.getKey());
                y.add(median(p.getValue()));
            }
            chart.addSeries(e.getKey(), x, y).setMarker(SeriesMarkers.CIRCLE);
        }
        return chart;
    }

    /** Goodputs by design (loss included in the name) and n. */
    static TreeMap<String, TreeMap<Integer, List<Double>>> series(final List<Row> rows) {
        final TreeMap<String, TreeMap<Integer, List<Double>>> out = new TreeMap<>();
        for (final Row r : rows) {
            final String name =
                    r.lossPct > 0 ? String.format(Locale.ROOT, "%s, %s%% loss", r.design, trim(r.lossPct)) : r.design;
            out.computeIfAbsent(name, d -> new TreeMap<>())
                    .computeIfAbsent(r.n, n -> new ArrayList<>())
                    .add(r.goodputGbps);
        }
        return out;
    }

    static double median(final List<Double> values) {
        final double[] s = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(s);
        final int m = s.length / 2;
        return (s.length & 1) == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    static String trim(final double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    private static String sizeLabel(final long elements) {
        final int log = 63 - Long.numberOfLeadingZeros(elements);
        return Long.bitCount(elements) == 1 ? "2^" + log : Long.toString(elements);
    }

    private static String rateLabel(final long bits) {
        if (bits % 1_000_000_000L == 0) {
            return bits / 1_000_000_000L + " Gbit/s";
        }
        return bits % 1_000_000L == 0 ? bits / 1_000_000L + " Mbit/s" : bits + " bit/s";
    }

    /** One row of the CSV: the columns the plot uses. */
    record Row(String design, int n, long elements, long rateBits, double lossPct, double goodputGbps, boolean exact) {}

    /**
     * Reads the CSV; every problem names the file, the line and the column. A CSV with the column extra_hosts (the
     * sweep's since the sharded design) names the rows with extra shard hosts as designs of their own.
     */
    static List<Row> read(final Path file) throws IOException, BadCsv {
        final List<Row> rows = new ArrayList<>();
        final boolean extras = Files.isRegularFile(file)
                && Files.lines(file)
                        .findFirst()
                        .map(h -> Arrays.asList(h.trim().split(",", -1)).contains(EXTRA_HOSTS))
                        .orElse(false);
        final List<String> wanted = new ArrayList<>(COLUMNS);
        if (extras) {
            wanted.add(EXTRA_HOSTS);
        }
        for (final Field[] f : columns(file, wanted)) {
            final String exact = f[6].text();
            if (!exact.equals("true") && !exact.equals("false")) {
                throw new BadCsv(f[6].where() + "exact must be true or false, got '" + exact + "'");
            }
            final int extra = extras ? (int) f[7].number(0, 4096) : 0;
            final String design =
                    extra == 0 ? f[0].text() : f[0].text() + ", " + extra + " extra host" + (extra == 1 ? "" : "s");
            rows.add(new Row(
                    design,
                    (int) f[1].number(1, 4096),
                    (long) f[2].number(1, Long.MAX_VALUE),
                    (long) f[3].number(1, Long.MAX_VALUE),
                    f[4].number(0, 100),
                    f[5].number(0, Double.MAX_VALUE),
                    exact.equals("true")));
        }
        return rows;
    }

    /** The sweep's column of extra shard hosts (optional). */
    static final String EXTRA_HOSTS = "extra_hosts";

    /** One cell of a CSV: its text and where it is (file and line), for messages. */
    record Field(String column, String text, String where) {
        double number(final double min, final double max) throws BadCsv {
            return RackPlot.number(where, column, text, min, max);
        }
    }

    /**
     * The cells of {@code wanted} (in that order) of every non-blank row after the header; fails, naming the file
     * and the line, on an empty file, a missing column, a row with another field count than the header, no rows,
     * or an empty first column (the design).
     */
    static List<Field[]> columns(final Path file, final List<String> wanted) throws IOException, BadCsv {
        if (!Files.isRegularFile(file)) {
            throw new BadCsv(file + ": " + (Files.exists(file) ? "not a file" : "no such file"));
        }
        final List<String> lines = Files.readAllLines(file);
        if (lines.isEmpty() || lines.get(0).isBlank()) {
            throw new BadCsv(file + ": empty; expected a header line naming the columns " + wanted);
        }
        final List<String> header = Arrays.asList(lines.get(0).trim().split(",", -1));
        final int[] at = new int[wanted.size()];
        for (int c = 0; c < at.length; c++) {
            at[c] = header.indexOf(wanted.get(c));
            if (at[c] < 0) {
                throw new BadCsv(file + " line 1: no column '" + wanted.get(c) + "' in the header " + header);
            }
        }
        final List<Field[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            final String line = lines.get(i).trim();
            if (line.isEmpty()) {
                continue;
            }
            final String[] f = line.split(",", -1);
            final String where = file + " line " + (i + 1) + ": ";
            if (f.length != header.size()) {
                throw new BadCsv(where + f.length + " fields, the header has " + header.size());
            }
            final Field[] row = new Field[at.length];
            for (int c = 0; c < at.length; c++) {
                row[c] = new Field(wanted.get(c), f[at[c]], where);
            }
            if (row[0].text().isEmpty()) {
                throw new BadCsv(where + "the design is empty");
            }
            rows.add(row);
        }
        if (rows.isEmpty()) {
            throw new BadCsv(file + ": a header and no rows");
        }
        return rows;
    }

    static double number(final String where, final String column, final String text, final double min, final double max)
            throws BadCsv {
        final double v;
        try {
            v = Double.parseDouble(text);
        } catch (final NumberFormatException e) {
            throw new BadCsv(where + column + " must be a number, got '" + text + "'");
        }
        if (!(v >= min && v <= max)) {
            throw new BadCsv(where + column + " must be within " + trim(min) + ".." + trim(max) + ", got " + text);
        }
        return v;
    }

    /** A CSV that cannot be plotted: the message names the file, the line and what is wrong. */
    static final class BadCsv extends Exception {
        private static final long serialVersionUID = 1L;

        BadCsv(final String message) {
            super(message);
        }
    }
}

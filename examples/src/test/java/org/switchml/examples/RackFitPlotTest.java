package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class RackFitPlotTest {
    private static final String HEADER =
            "design,n,coefficients,rep,fit_seconds,iterations,final_loss," + "mb_per_executor_per_iteration,load1";

    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        return Plots.run(RackFitPlot::run, out, err, args);
    }

    @Test
    void drawsOneLinePerDesignFromTheMedianOfItsReps(@TempDir final Path dir) throws Exception {
        final Path csv = dir.resolve("rack-spark.csv");
        Files.write(
                csv,
                List.of(
                        HEADER,
                        "switchml-hub,4,1000010,1,20.0,10,1.5,16.1,2.1",
                        "mllib,4,1000010,1,70.0,10,1.5,33.0,2.1",
                        "switchml-embedded,4,1000010,1,40.0,10,1.5,16.2,2.1",
                        "switchml-hub,4,1000010,2,22.0,10,1.5,16.1,2.1",
                        "switchml-hub,8,1000010,1,21.0,10,1.5,16.1,2.1",
                        "mllib,8,1000010,1,120.0,10,1.5,33.0,2.1"));
        final List<RackFitPlot.Fit> fits = RackFitPlot.read(csv);
        assertEquals(6, fits.size());
        assertEquals(
                List.of(20.0, 22.0),
                RackFitPlot.series(fits).get("switchml-hub").get(4));
        final Path png = dir.resolve("fit.png");
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        assertEquals(
                RackPlot.EXIT_OK,
                run(out, err, csv.toString(), "-o", png.toString(), "--width", "400", "--height", "300"),
                err.toString());
        assertTrue(out.toString().contains("6 fits, 3 designs"), out.toString());
        Plots.assertDrawn(png, 400, 300);
    }

    @Test
    void mixedSizesAndMalformedRowsAreClearErrorsWithNoImage(@TempDir final Path dir) throws Exception {
        final String[][] cases = {
            {HEADER + "\nmllib,4,1000010,1,70,10,1.5,33,2\nmllib,4,20,1,7,10,1.5,3,2", "several problem sizes"},
            {HEADER + "\nmllib,four,1000010,1,70,10,1.5,33,2", "n must be a number, got 'four'"},
            {HEADER + "\nmllib,4,1000010,1,70", "5 fields, the header has 9"},
            {"design,n\nmllib,4", "no column 'coefficients'"},
            {HEADER, "a header and no rows"},
        };
        for (final String[] c : cases) {
            final Path csv = Files.writeString(dir.resolve("bad.csv"), c[0]);
            final Path png = dir.resolve("bad.png");
            final StringWriter err = new StringWriter();
            assertEquals(
                    RackPlot.EXIT_BAD_DATA, run(new StringWriter(), err, csv.toString(), "-o", png.toString()), c[0]);
            assertTrue(
                    err.toString().startsWith("rack-fit-plot: ")
                            && err.toString().contains(c[1]),
                    "expected '" + c[1] + "' in: " + err);
            assertEquals(1, err.toString().lines().count(), "one line: " + err);
            assertFalse(Files.exists(png), "an image was written for a bad CSV");
        }
        assertEquals(
                2,
                run(
                        new StringWriter(),
                        new StringWriter(),
                        dir.resolve("bad.csv").toString()));
    }

    @Test
    void aMissingCsvIsOneLine(@TempDir final Path dir) {
        Plots.assertMissingCsvIsOneLine(RackFitPlot::run, "rack-fit-plot", dir);
    }
}

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
class RackPlotTest {
    private static final String HEADER = "design,n,elements,rate_bits,mtu,loss_pct,rep,seconds,"
            + "goodput_gbps_per_worker,retransmissions,exact,load1";

    private static int run(final StringWriter out, final StringWriter err, final String... args) {
        return Plots.run(RackPlot::run, out, err, args);
    }

    @Test
    void drawsADecodablePngThatIsNotBlank(@TempDir final Path dir) throws Exception {
        final Path csv = dir.resolve("rack.csv");
        Files.write(
                csv,
                List.of(
                        HEADER,
                        "switchml,2,4194304,50000000,9000,0,1,2.9,0.046,0,true,3.1",
                        "switchml,2,4194304,50000000,9000,0,2,3.1,0.043,0,true,3.1",
                        "mpi-ring,2,4194304,50000000,9000,0,1,3.4,0.039,0,true,3.1",
                        "switchml,4,4194304,50000000,9000,0,1,3.4,0.039,5,true,3.1",
                        "mpi-ring,4,4194304,50000000,9000,0,1,4.5,0.030,0,true,3.1",
                        "switchml-ps,4,4194304,50000000,9000,0,1,9.9,0.014,0,true,3.1",
                        "switchml,4,4194304,50000000,9000,1,1,3.9,0.034,90,true,3.1",
                        "switchml,4,4194304,50000000,9000,0,3,9.9,0.001,0,false,3.1",
                        "switchml,4,65536,50000000,9000,0,1,0.1,0.020,0,true,3.1"));
        final Path png = dir.resolve("rack.png");
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        assertEquals(
                RackPlot.EXIT_OK,
                run(out, err, csv.toString(), "--out", png.toString(), "--width", "400", "--height", "300"),
                err.toString());
        assertTrue(err.toString().contains("left out 1 row"), err.toString());
        assertTrue(out.toString().contains("4 designs"), out.toString());
        Plots.assertDrawn(png, 400, 300);
    }

    @Test
    void rowsWithExtraShardHostsAreADesignOfTheirOwn(@TempDir final Path dir) throws Exception {
        final Path csv = dir.resolve("rack.csv");
        Files.write(
                csv,
                List.of(
                        HEADER + ",extra_hosts,packets_sent,cpu_s_per_gb,cpu_s_per_gb_busiest",
                        "switchml-sharded,4,4194304,50000000,9000,0,1,2.9,0.032,0,true,3.1,0,100,1.0,0.5",
                        "switchml-sharded,4,4194304,50000000,9000,0,1,2.5,0.040,0,true,3.1,2,100,1.0,0.5",
                        "switchml-sharded,4,4194304,50000000,9000,0,1,2.0,0.049,0,true,3.1,4,100,,"));
        final List<RackPlot.Row> rows = RackPlot.read(csv);
        assertEquals(
                List.of("switchml-sharded", "switchml-sharded, 2 extra hosts", "switchml-sharded, 4 extra hosts"),
                rows.stream().map(RackPlot.Row::design).toList());
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        assertEquals(
                RackPlot.EXIT_OK,
                run(out, err, csv.toString(), "--out", dir.resolve("x.png").toString()),
                err.toString());
        assertTrue(out.toString().contains("3 designs"), out.toString());
    }

    @Test
    void defaultSizeIsTwoToTheTwentySecondOrTheLargest() throws Exception {
        final RackPlot.Row small = new RackPlot.Row("switchml", 2, 1 << 16, 1, 0, 1, true);
        final RackPlot.Row mid = new RackPlot.Row("switchml", 2, 1 << 22, 1, 0, 1, true);
        final RackPlot.Row large = new RackPlot.Row("switchml", 2, 1 << 24, 1, 0, 1, true);
        assertEquals(1 << 22, RackPlot.defaultSize(List.of(small, large, mid)));
        assertEquals(1 << 24, RackPlot.defaultSize(List.of(small, large)));
        assertEquals(2.0, RackPlot.median(List.of(3.0, 1.0, 2.0)));
        assertEquals(1.5, RackPlot.median(List.of(2.0, 1.0)));
    }

    @Test
    void malformedCsvGivesAClearErrorAndNoImage(@TempDir final Path dir) throws Exception {
        final String[][] cases = {
            {"design,n,elements\nswitchml,2,4", "no column 'rate_bits' in the header"},
            {
                HEADER + "\nswitchml,two,4194304,50000000,9000,0,1,2.9,0.046,0,true,3.1",
                "line 2: n must be a number, got 'two'"
            },
            {HEADER + "\nswitchml,2,4194304,50000000,9000,0,1,2.9,0.046,0,true", "line 2: 11 fields, the header has 12"
            },
            {HEADER + "\nswitchml,2,4194304,50000000,9000,0,1,2.9,0.046,0,maybe,3.1", "exact must be true or false"},
            {HEADER, "a header and no rows"},
            {"", "empty"},
        };
        for (final String[] c : cases) {
            final Path csv = dir.resolve("bad.csv");
            Files.writeString(csv, c[0]);
            final Path png = dir.resolve("bad.png");
            final StringWriter err = new StringWriter();
            assertEquals(
                    RackPlot.EXIT_BAD_DATA, run(new StringWriter(), err, csv.toString(), "-o", png.toString()), c[0]);
            assertTrue(err.toString().contains(c[1]), "expected '" + c[1] + "' in: " + err);
            assertTrue(err.toString().startsWith("rack-plot: "), err.toString());
            assertEquals(1, err.toString().lines().count(), "one line: " + err);
            assertFalse(Files.exists(png), "an image was written for a malformed CSV");
        }
    }

    @Test
    void aMissingCsvIsOneLine(@TempDir final Path dir) {
        Plots.assertMissingCsvIsOneLine(RackPlot::run, "rack-plot", dir);
    }

    @Test
    void aSizeWithNoRowIsAnErrorAndBadFlagsAreUsageErrors(@TempDir final Path dir) throws Exception {
        final Path csv = dir.resolve("rack.csv");
        Files.write(csv, List.of(HEADER, "switchml,2,4194304,50000000,9000,0,1,2.9,0.046,0,true,3.1"));
        final StringWriter err = new StringWriter();
        assertEquals(
                RackPlot.EXIT_BAD_DATA,
                run(
                        new StringWriter(),
                        err,
                        csv.toString(),
                        "-o",
                        dir.resolve("x.png").toString(),
                        "--elements",
                        "1024"));
        assertTrue(err.toString().contains("no exact row with elements=1024"), err.toString());
        for (final String[] args :
                new String[][] {{csv.toString()}, {csv.toString(), "-o", "x.png", "--width", "10"}}) {
            final StringWriter usage = new StringWriter();
            assertEquals(2, run(new StringWriter(), usage, args));
            assertEquals(2, usage.toString().lines().count(), usage.toString());
            assertTrue(
                    usage.toString().startsWith("rack-plot: ")
                            && usage.toString().endsWith("Try --help.\n"),
                    usage.toString());
        }
    }
}

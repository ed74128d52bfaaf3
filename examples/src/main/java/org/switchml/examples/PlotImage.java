package org.switchml.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The image options the rack's plotting programs share (a picocli mixin): where the PNG goes and its size. */
final class PlotImage {
    @Option(
            names = {"-o", "--out"},
            required = true,
            paramLabel = "PNG",
            description = "the image to write")
    Path out;

    @Option(names = "--width", description = "image width in pixels (default ${DEFAULT-VALUE})")
    int width = 900;

    @Option(names = "--height", description = "image height in pixels (default ${DEFAULT-VALUE})")
    int height = 560;

    /** A usage error (exit 2) when the size is too small to draw on. */
    void check(final CommandLine cl) {
        if (width < 200 || height < 150) {
            throw Cli.usage(cl, "--width must be >= 200 and --height >= 150");
        }
    }

    /** A chart of this size. */
    XYChartBuilder chart() {
        return new XYChartBuilder().width(width).height(height);
    }

    void write(final XYChart chart) throws IOException {
        Files.write(out, BitmapEncoder.getBitmapBytes(chart, BitmapFormat.PNG));
    }
}

package org.switchml.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;

/** What the plotting programs' tests share: running a command line, and checking the PNG it drew. */
final class Plots {
    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Plots() {}

    /** A plotting program's {@code run(args, out, err)}. */
    interface Program {
        int run(String[] args, PrintStream out, PrintStream err);
    }

    /** Runs {@code program} with {@code args}; returns its exit code, with stdout and stderr in {@code out} and {@code err}. */
    static int run(final Program program, final StringWriter out, final StringWriter err, final String... args) {
        final ByteArrayOutputStream o = new ByteArrayOutputStream();
        final ByteArrayOutputStream e = new ByteArrayOutputStream();
        final int code = program.run(
                args,
                new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8));
        out.write(o.toString(StandardCharsets.UTF_8));
        err.write(e.toString(StandardCharsets.UTF_8));
        return code;
    }

    /**
     * A CSV that is not there: exit 2 and one line naming it, without a stack trace (with {@code --verbose}, the
     * same line and then the trace); no image.
     */
    static void assertMissingCsvIsOneLine(final Program program, final String name, final Path dir) {
        final Path csv = dir.resolve("no-such.csv");
        final Path png = dir.resolve("missing.png");
        final StringWriter err = new StringWriter();
        assertEquals(2, run(program, new StringWriter(), err, csv.toString(), "-o", png.toString()));
        assertEquals(
                List.of(name + ": " + csv + ": no such file"),
                err.toString().lines().toList());
        final StringWriter verbose = new StringWriter();
        assertEquals(2, run(program, new StringWriter(), verbose, csv.toString(), "-o", png.toString(), "--verbose"));
        assertEquals(
                name + ": " + csv + ": no such file",
                verbose.toString().lines().findFirst().orElse(""));
        assertTrue(verbose.toString().contains("\tat org.switchml.examples."), verbose.toString());
        assertFalse(Files.exists(png));
    }

    /** The PNG decodes, has the size asked for, and is not one colour. */
    static void assertDrawn(final Path png, final int width, final int height) throws IOException {
        final BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, png + " does not decode");
        assertEquals(width, image.getWidth());
        assertEquals(height, image.getHeight());
        final int first = image.getRGB(0, 0);
        boolean varied = false;
        for (int y = 0; y < image.getHeight() && !varied; y++) {
            for (int x = 0; x < image.getWidth() && !varied; x++) {
                varied = image.getRGB(x, y) != first;
            }
        }
        assertTrue(varied, png + " is one colour");
    }
}

package org.switchml.examples;

import picocli.CommandLine;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the plotting programs' tests share: running a command line, and checking the PNG it drew. */
final class Plots {
    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Plots() {
    }

    /** Runs {@code command} with {@code args}; returns its exit code, with stdout and stderr in {@code out} and {@code err}. */
    static int run(final Object command, final StringWriter out, final StringWriter err, final String... args) {
        final CommandLine cl = new CommandLine(command);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
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

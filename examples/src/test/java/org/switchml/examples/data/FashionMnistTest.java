package org.switchml.examples.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FashionMnistTest {

    private static byte[] idx(final int type, final int[] dims, final byte[] values) throws IOException {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt((type << 8) | dims.length);
        for (final int d : dims) {
            out.writeInt(d);
        }
        out.write(values);
        return bytes.toByteArray();
    }

    private static void write(final Path p, final byte[] content, final boolean gzip) throws IOException {
        try (OutputStream out = gzip ? new GZIPOutputStream(Files.newOutputStream(p)) : Files.newOutputStream(p)) {
            out.write(content);
        }
    }

    @Test
    void readsPlainAndGzippedFiles(@TempDir final Path dir) throws IOException {
        final byte[] pixels = new byte[3 * 2 * 2];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = (byte) (250 + i); // values above 127 must come back unsigned
        }
        write(dir.resolve("train-images-idx3-ubyte.gz"), idx(8, new int[] {3, 2, 2}, pixels), true);
        write(dir.resolve("train-labels-idx1-ubyte"), idx(8, new int[] {3}, new byte[] {9, 0, 4}), false);
        assertTrue(FashionMnist.available(dir, FashionMnist.Split.TRAIN));
        final FashionMnist d = FashionMnist.load(dir, FashionMnist.Split.TRAIN);
        assertEquals(3, d.size());
        assertEquals(4, d.features());
        assertEquals(9, d.label(0));
        assertEquals(4, d.label(2));
        assertArrayEquals(new double[] {254, 255, 0, 1}, d.pixels(1));
    }

    @Test
    void rejectsWhatIsNotUnsignedByteIdx() {
        assertThrows(
                IOException.class,
                () -> Idx.read(new ByteArrayInputStream(idx(0x0D, new int[] {1}, new byte[4])), "floats"));
        assertThrows(IOException.class, () -> Idx.read(new ByteArrayInputStream(new byte[] {1, 2, 3, 4}), "junk"));
        final IOException e = assertThrows(
                IOException.class,
                () -> Idx.read(
                        new ByteArrayInputStream(Arrays.copyOf(idx(8, new int[] {2, 3}, new byte[6]), 12)), "short"));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void missingFilesNameThePackage(@TempDir final Path dir) {
        final IOException e = assertThrows(IOException.class, () -> FashionMnist.load(dir, FashionMnist.Split.TEST));
        assertTrue(e.getMessage().contains("dataset-fashion-mnist"), e.getMessage());
    }

    @Test
    void samplesAreDistinctAndSeeded(@TempDir final Path dir) throws IOException {
        write(dir.resolve("t10k-images-idx3-ubyte"), idx(8, new int[] {100, 1, 1}, new byte[100]), false);
        write(dir.resolve("t10k-labels-idx1-ubyte"), idx(8, new int[] {100}, new byte[100]), false);
        final FashionMnist d = FashionMnist.load(dir, FashionMnist.Split.TEST);
        final int[] a = d.sample(30, 7);
        assertArrayEquals(a, d.sample(30, 7));
        final Set<Integer> distinct = new HashSet<>();
        for (final int i : a) {
            distinct.add(i);
        }
        assertEquals(30, distinct.size());
        assertEquals(100, d.sample(1000, 7).length);
    }

    /** The real files of the Debian package, when installed. */
    @Test
    void debianPackageFiles() throws IOException {
        final Path dir = FashionMnist.defaultDirectory();
        assumeTrue(
                FashionMnist.available(dir, FashionMnist.Split.TRAIN), "dataset-fashion-mnist not installed in " + dir);
        final FashionMnist train = FashionMnist.load(dir, FashionMnist.Split.TRAIN);
        assertEquals(60_000, train.size());
        assertEquals(784, train.features());
        final int[] perClass = new int[FashionMnist.CLASSES];
        for (int i = 0; i < train.size(); i++) {
            perClass[train.label(i)]++;
        }
        for (final int c : perClass) {
            assertEquals(6_000, c); // the training set is balanced
        }
        final FashionMnist test = FashionMnist.load(dir, FashionMnist.Split.TEST);
        assertEquals(10_000, test.size());
    }
}

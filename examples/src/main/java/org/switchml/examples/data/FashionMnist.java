package org.switchml.examples.data;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017: 28x28 grey images of 10 clothing classes, 60,000 for
 * training and 10,000 for testing) read from its IDX files, by default those of the Debian package
 * {@code dataset-fashion-mnist} in {@value #DEBIAN_DIRECTORY}.
 *
 * @param images the images (n x 784, unsigned bytes)
 * @param labels the labels 0..9
 */
public record FashionMnist(Idx images, Idx labels) {
    /** Where {@code apt-get install dataset-fashion-mnist} puts the files. */
    public static final String DEBIAN_DIRECTORY = "/usr/share/datasets/fashion-mnist";
    /** Classes. */
    public static final int CLASSES = 10;

    /** The two parts of the data set. */
    public enum Split {
        /** 60,000 images. */
        TRAIN("train"),
        /** 10,000 images. */
        TEST("t10k");

        private final String prefix;

        Split(final String prefix) {
            this.prefix = prefix;
        }
    }

    /** Checks that images and labels belong together. */
    public FashionMnist {
        if (images.dims().length != 3 || labels.dims().length != 1 || images.dims()[0] != labels.dims()[0]) {
            throw new IllegalArgumentException("images " + Arrays.toString(images.dims()) + " and labels "
                    + Arrays.toString(labels.dims()) + " do not match");
        }
    }

    /**
     * The directory of the IDX files: {@code -Dswitchml.fashionMnist.dir}, else {@code FASHION_MNIST_DIR},
     * else {@value #DEBIAN_DIRECTORY}.
     */
    public static Path defaultDirectory() {
        final String prop = System.getProperty("switchml.fashionMnist.dir");
        if (prop != null) {
            return Paths.get(prop);
        }
        final String env = System.getenv("FASHION_MNIST_DIR");
        return Paths.get(env != null ? env : DEBIAN_DIRECTORY);
    }

    /** Whether the files of {@code split} are present in {@code dir} (compressed or not). */
    public static boolean available(final Path dir, final Split split) {
        return find(dir, split.prefix + "-images-idx3-ubyte") != null
                && find(dir, split.prefix + "-labels-idx1-ubyte") != null;
    }

    /** Loads one split from {@code dir}. */
    public static FashionMnist load(final Path dir, final Split split) throws IOException {
        return new FashionMnist(
                Idx.read(require(dir, split.prefix + "-images-idx3-ubyte")),
                Idx.read(require(dir, split.prefix + "-labels-idx1-ubyte")));
    }

    private static Path find(final Path dir, final String base) {
        for (final String name : new String[] {base + ".gz", base}) {
            final Path p = dir.resolve(name);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    private static Path require(final Path dir, final String base) throws IOException {
        final Path p = find(dir, base);
        if (p == null) {
            throw new IOException("Fashion-MNIST file " + base + "[.gz] not found in " + dir
                    + " (Debian: apt-get install dataset-fashion-mnist)");
        }
        return p;
    }

    /** Number of images. */
    public int size() {
        return labels.dims()[0];
    }

    /** Pixels per image (784). */
    public int features() {
        return images.stride();
    }

    /** Label of image i. */
    public int label(final int i) {
        return labels.values()[i] & 0xff;
    }

    /** Pixel values of image i, 0..255, as doubles. */
    public double[] pixels(final int i) {
        final int f = features();
        final double[] out = new double[f];
        final byte[] v = images.values();
        for (int j = 0; j < f; j++) {
            out[j] = v[i * f + j] & 0xff;
        }
        return out;
    }

    /**
     * {@code n} distinct images chosen uniformly with a seeded generator (partial Fisher-Yates), in the
     * order drawn; all of them, shuffled, if {@code n >= size()}.
     */
    public int[] sample(final int n, final long seed) {
        final int total = size();
        final int k = Math.min(n, total);
        final int[] idx = new int[total];
        for (int i = 0; i < total; i++) {
            idx[i] = i;
        }
        final SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < k; i++) {
            final int j = i + rnd.nextInt(total - i);
            final int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        return Arrays.copyOf(idx, k);
    }
}

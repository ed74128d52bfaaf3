package org.switchml.examples.data;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * Reads IDX files (the MNIST format: a magic number {@code 0x0000TTDD} with the element type TT and the
 * number of dimensions DD, the dimensions as big-endian int32, then the elements in row-major order).
 * Only unsigned-byte elements (type 0x08) are supported, which is what (Fashion-)MNIST uses. A path
 * ending in {@code .gz} is decompressed on the fly.
 *
 * @param dims   the dimensions, outermost first
 * @param values the elements, row-major (unsigned: read with {@code & 0xff})
 */
public record Idx(int[] dims, byte[] values) {
    private static final int UNSIGNED_BYTE = 0x08;

    /** Reads an IDX file ({@code .gz} or not). */
    public static Idx read(final Path path) throws IOException {
        try (InputStream raw = Files.newInputStream(path)) {
            final InputStream in = path.getFileName().toString().endsWith(".gz")
                    ? new GZIPInputStream(raw, 1 << 16)
                    : new BufferedInputStream(raw, 1 << 16);
            return read(in, path.toString());
        }
    }

    /** Reads an IDX stream; {@code name} appears in errors. */
    public static Idx read(final InputStream stream, final String name) throws IOException {
        final DataInputStream in = new DataInputStream(stream);
        final int magic = in.readInt();
        final int type = (magic >>> 8) & 0xff;
        final int rank = magic & 0xff;
        if ((magic >>> 16) != 0 || rank == 0) {
            throw new IOException(name + ": not an IDX file (magic 0x" + Integer.toHexString(magic) + ")");
        }
        if (type != UNSIGNED_BYTE) {
            throw new IOException(name + ": IDX element type 0x" + Integer.toHexString(type)
                    + " is not supported (only unsigned bytes, 0x08)");
        }
        final int[] dims = new int[rank];
        long total = 1;
        for (int i = 0; i < rank; i++) {
            dims[i] = in.readInt();
            if (dims[i] < 0) {
                throw new IOException(name + ": negative dimension " + dims[i]);
            }
            total *= dims[i];
        }
        if (total > Integer.MAX_VALUE - 16) {
            throw new IOException(name + ": " + total + " elements do not fit one array");
        }
        final byte[] values = new byte[(int) total];
        try {
            in.readFully(values);
        } catch (final EOFException e) {
            throw new IOException(
                    name + ": truncated, expected " + total + " elements for dimensions " + Arrays.toString(dims), e);
        }
        return new Idx(dims, values);
    }

    /** Elements per outermost index (e.g. pixels per image). */
    public int stride() {
        int s = 1;
        for (int i = 1; i < dims.length; i++) {
            s *= dims[i];
        }
        return s;
    }
}

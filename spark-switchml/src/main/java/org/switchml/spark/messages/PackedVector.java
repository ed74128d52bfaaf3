package org.switchml.spark.messages;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Arrays;

/**
 * A vector that Java serialization writes with its runs of {@code +0.0} as counts, bit for bit otherwise.
 * A loop's first state travels in its stage's closure, which every task deserializes: a model's first
 * point is mostly zeros, so 10^7 coefficients take a few bytes instead of 80 MB per task.
 */
public final class PackedVector implements Serializable {
    private static final long serialVersionUID = 1L;

    private transient double[] values;
    /** After deserialization until first use: the length, then (zeros, values) runs, and the values. */
    private transient int length;

    private transient int[] runs;
    private transient double[] nonZeros;

    public PackedVector(final double[] values) {
        this.values = values;
    }

    /**
     * The vector (the same array on every call). A deserialized vector is unpacked on first use, so a
     * task that takes a shared copy instead never allocates its own.
     */
    public synchronized double[] values() {
        if (values == null) {
            final double[] v = new double[length];
            int i = 0;
            int q = 0;
            for (int r = 0; r < runs.length; r += 2) {
                i += runs[r];
                System.arraycopy(nonZeros, q, v, i, runs[r + 1]);
                i += runs[r + 1];
                q += runs[r + 1];
            }
            values = v;
            runs = null;
            nonZeros = null;
        }
        return values;
    }

    private void writeObject(final ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
        final double[] v = values;
        out.writeInt(v.length);
        int i = 0;
        while (i < v.length) {
            int zeros = i;
            while (zeros < v.length && Double.doubleToRawLongBits(v[zeros]) == 0L) {
                zeros++;
            }
            int end = zeros;
            while (end < v.length && Double.doubleToRawLongBits(v[end]) != 0L) {
                end++;
            }
            out.writeInt(zeros - i);
            out.writeInt(end - zeros);
            for (int j = zeros; j < end; j++) {
                out.writeLong(Double.doubleToRawLongBits(v[j]));
            }
            i = end;
        }
    }

    private void readObject(final ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        final int n = in.readInt();
        if (n < 0) {
            throw new InvalidObjectException("packed vector of negative length " + n);
        }
        int[] r = new int[16];
        double[] nz = new double[16];
        int count = 0;
        int q = 0;
        int i = 0;
        while (i < n) {
            final int zeros = in.readInt();
            final int values = in.readInt();
            if (zeros < 0 || values < 0 || (long) i + zeros + values > n || zeros + values == 0) {
                throw new InvalidObjectException("packed vector run (" + zeros + " zeros, " + values + " values) at "
                        + i + " does not fit its length " + n);
            }
            if (count + 2 > r.length) {
                r = Arrays.copyOf(r, r.length * 2);
            }
            r[count++] = zeros;
            r[count++] = values;
            if (q + values > nz.length) {
                nz = Arrays.copyOf(nz, Math.max(q + values, (int) Math.min(n, 2L * nz.length)));
            }
            for (int j = 0; j < values; j++) {
                nz[q++] = Double.longBitsToDouble(in.readLong());
            }
            i += zeros + values;
        }
        length = n;
        runs = Arrays.copyOf(r, count);
        nonZeros = nz;
    }
}

package org.switchml.p4info;

import com.google.protobuf.ByteString;

/**
 * P4Runtime byte strings for {@code bit<W>} values: big-endian, and canonical when written (the shortest
 * string holding the value, one zero byte for 0). A reader accepts any string of 1 to ceil(W/8) bytes
 * whose value fits W bits.
 */
public final class Bytestrings {
    private Bytestrings() {}

    /** Canonical encoding of an unsigned {@code value} of a {@code bit<bitwidth>} field named {@code what}. */
    public static ByteString encode(final long value, final int bitwidth, final String what) {
        if (bitwidth < 64 && (value < 0 || value >>> bitwidth != 0)) {
            throw new IllegalArgumentException(
                    what + ": value " + Long.toUnsignedString(value) + " does not fit bit<" + bitwidth + ">");
        }
        int bytes = 1;
        while (bytes < 8 && value >>> (8 * bytes) != 0) {
            bytes++;
        }
        final byte[] out = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            out[bytes - 1 - i] = (byte) (value >>> (8 * i));
        }
        return ByteString.copyFrom(out);
    }

    /**
     * Decodes a value of a {@code bit<bitwidth>} field; throws {@link IllegalArgumentException} naming
     * {@code what} when the string is empty, longer than the field's bytes, or its value does not fit.
     */
    public static long decode(final ByteString bytes, final int bitwidth, final String what) {
        final int max = (bitwidth + 7) / 8;
        if (bytes.isEmpty()) {
            throw new IllegalArgumentException(what + ": empty byte string for a bit<" + bitwidth + "> value");
        }
        if (bytes.size() > max || bitwidth > 64) {
            throw new IllegalArgumentException(
                    what + ": " + bytes.size() + " bytes for a bit<" + bitwidth + "> value (at most " + max + ")");
        }
        long v = 0;
        for (int i = 0; i < bytes.size(); i++) {
            v = (v << 8) | (bytes.byteAt(i) & 0xFF);
        }
        if (bitwidth < 64 && v >>> bitwidth != 0) {
            throw new IllegalArgumentException(
                    what + ": value 0x" + Long.toHexString(v) + " does not fit bit<" + bitwidth + ">");
        }
        return v;
    }
}

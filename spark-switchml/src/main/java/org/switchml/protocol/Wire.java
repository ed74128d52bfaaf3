package org.switchml.protocol;

import io.netty.buffer.ByteBuf;
import java.nio.ByteOrder;

/**
 * Byte layout of a SwitchML message (docs/protocol.md, section 2): offsets, constants and static
 * accessors that read or write a field at an absolute position of a buffer, without allocating.
 *
 * <p>All fields are big-endian. Readers never change the buffer's indices.
 */
public final class Wire {
    /** Protocol version carried in the high nibble of byte 0. */
    public static final int VERSION = 1;
    /** Length of the header that precedes the payload. */
    public static final int HEADER_LENGTH = 24;
    /** Largest k that fits one IPv4 UDP datagram: 24 + 4k &lt;= 65507. */
    public static final int MAX_K = (65_507 - HEADER_LENGTH) / 4;
    /** k the P4 program is built for. */
    public static final int P4_K = 64;
    /** Exponent value meaning "no data / all-zero block"; smallest in max-aggregation. */
    public static final short EXPONENT_NONE = Short.MIN_VALUE;
    /** First port of the SwitchML UDP port range 0xBEE0-0xBEEF. */
    public static final int DEFAULT_PORT = 0xBEE0;
    /**
     * Largest number of workers in one job: every value of the 8-bit {@code rank} field. The software switch
     * keeps a bitmap of this width per slot and set.
     */
    public static final int MAX_WORKERS = 256;
    /**
     * Largest number of workers in one job on the P4 program: its per-set worker bitmap is one 32-bit register
     * cell, the width of a Tofino stateful ALU, so that one packet reads and updates it in one stage.
     */
    public static final int P4_MAX_WORKERS = 32;

    public static final int VERSION_KIND_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int K_OFFSET = 2;
    public static final int JOB_ID_OFFSET = 4;
    public static final int GENERATION_OFFSET = 8;
    public static final int RANK_OFFSET = 10;
    public static final int SLOT_OFFSET = 12;
    public static final int EXPONENT_OFFSET = 14;
    public static final int SEQ_OFFSET = 16;
    /** The job's secret (docs/protocol.md section 2): a packet without it touches no job state. */
    public static final int SECRET_OFFSET = 20;

    public static final int PAYLOAD_OFFSET = HEADER_LENGTH;

    private static final int SET_BIT = 0x80;
    private static final int ENCODING_MASK = 0x0F;

    private Wire() {}

    /** Datagram length of a message with {@code k} elements. */
    public static int datagramLength(final int k) {
        return HEADER_LENGTH + 4 * k;
    }

    /**
     * Writes a complete header at {@code base}. The payload follows at {@code base + HEADER_LENGTH}.
     */
    public static void writeHeader(
            final ByteBuf buf,
            final int base,
            final Kind kind,
            final int set,
            final Encoding encoding,
            final int k,
            final int jobId,
            final int generation,
            final int rank,
            final int slot,
            final short exponent,
            final int seq,
            final int secret) {
        buf.setByte(base + VERSION_KIND_OFFSET, (VERSION << 4) | kind.code());
        buf.setByte(base + FLAGS_OFFSET, (set != 0 ? SET_BIT : 0) | encoding.code());
        buf.setShort(base + K_OFFSET, k);
        buf.setInt(base + JOB_ID_OFFSET, jobId);
        buf.setShort(base + GENERATION_OFFSET, generation);
        buf.setByte(base + RANK_OFFSET, rank);
        buf.setByte(base + RANK_OFFSET + 1, 0);
        buf.setShort(base + SLOT_OFFSET, slot);
        buf.setShort(base + EXPONENT_OFFSET, exponent);
        buf.setInt(base + SEQ_OFFSET, seq);
        buf.setInt(base + SECRET_OFFSET, secret);
    }

    public static int version(final ByteBuf buf, final int base) {
        return (buf.getUnsignedByte(base + VERSION_KIND_OFFSET) >>> 4) & 0x0F;
    }

    /** Raw kind code (low nibble of byte 0); see {@link Kind#fromCode(int)}. */
    public static int kindCode(final ByteBuf buf, final int base) {
        return buf.getUnsignedByte(base + VERSION_KIND_OFFSET) & 0x0F;
    }

    public static void kind(final ByteBuf buf, final int base, final Kind kind) {
        buf.setByte(base + VERSION_KIND_OFFSET, (VERSION << 4) | kind.code());
    }

    public static int set(final ByteBuf buf, final int base) {
        return (buf.getUnsignedByte(base + FLAGS_OFFSET) & SET_BIT) != 0 ? 1 : 0;
    }

    /** Raw encoding code (bits 3-0 of byte 1). */
    public static int encodingCode(final ByteBuf buf, final int base) {
        return buf.getUnsignedByte(base + FLAGS_OFFSET) & ENCODING_MASK;
    }

    public static int k(final ByteBuf buf, final int base) {
        return buf.getUnsignedShort(base + K_OFFSET);
    }

    public static int jobId(final ByteBuf buf, final int base) {
        return buf.getInt(base + JOB_ID_OFFSET);
    }

    public static int generation(final ByteBuf buf, final int base) {
        return buf.getUnsignedShort(base + GENERATION_OFFSET);
    }

    public static int rank(final ByteBuf buf, final int base) {
        return buf.getUnsignedByte(base + RANK_OFFSET);
    }

    public static void rank(final ByteBuf buf, final int base, final int rank) {
        buf.setByte(base + RANK_OFFSET, rank);
    }

    public static int slot(final ByteBuf buf, final int base) {
        return buf.getUnsignedShort(base + SLOT_OFFSET);
    }

    public static short exponent(final ByteBuf buf, final int base) {
        return buf.getShort(base + EXPONENT_OFFSET);
    }

    public static void exponent(final ByteBuf buf, final int base, final short exponent) {
        buf.setShort(base + EXPONENT_OFFSET, exponent);
    }

    public static int seq(final ByteBuf buf, final int base) {
        return buf.getInt(base + SEQ_OFFSET);
    }

    /** The secret the packet carries (32 bits, compared as a whole). */
    public static int secret(final ByteBuf buf, final int base) {
        return buf.getInt(base + SECRET_OFFSET);
    }

    /** Slot of job-global packet number {@code g} in a pool of {@code poolSize} slots. */
    public static int slotOf(final long g, final int poolSize) {
        return (int) (g % poolSize);
    }

    /** Shadow set of job-global packet number {@code g}: consecutive uses of a slot alternate. */
    public static int setOf(final long g, final int poolSize) {
        return (int) ((g / poolSize) & 1);
    }

    /**
     * Reads {@code count} big-endian int32 at {@code offset} into {@code dst}: one bulk copy instead of
     * a bounds-checked call per element (the hot path of both switch and worker).
     */
    public static void readInts(
            final ByteBuf buf, final int offset, final int[] dst, final int dstOffset, final int count) {
        buf.nioBuffer(offset, 4 * count)
                .order(ByteOrder.BIG_ENDIAN)
                .asIntBuffer()
                .get(dst, dstOffset, count);
    }

    /** Writes {@code count} ints of {@code src} as big-endian int32 at {@code offset}, in one bulk copy. */
    public static void writeInts(
            final ByteBuf buf, final int offset, final int[] src, final int srcOffset, final int count) {
        if (buf.nioBufferCount() == 1) {
            buf.nioBuffer(offset, 4 * count)
                    .order(ByteOrder.BIG_ENDIAN)
                    .asIntBuffer()
                    .put(src, srcOffset, count);
        } else {
            for (int i = 0; i < count; i++) {
                buf.setInt(offset + 4 * i, src[srcOffset + i]);
            }
        }
    }
}

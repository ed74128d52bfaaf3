package org.switchml.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.Arrays;

/**
 * Maps one worker's input vector onto packet payloads and the summed payloads back onto its output
 * vector, block by block, following one {@link Encoding} (docs/protocol.md, section 5).
 *
 * <p>A block is the set of vector elements one packet carries ({@link #elementsPerBlock()}); the last
 * block is zero-padded. Construction validates the input (NaN and infinities are rejected, naming the
 * first bad index) and computes every block's local exponent, so nothing is sent for bad input.
 */
public abstract class VectorCodec {
    private final Encoding encoding;
    private final int k;
    private final int elementsPerBlock;
    private final int length;
    private final int blocks;
    /** B(n): headroom bits for the n-way sum. */
    protected final int b;
    private final short[] localExponents;
    /** One packet's lanes, so payloads move in one bulk copy. Codecs are used by one thread at a time. */
    protected final int[] lanes;

    private VectorCodec(final Encoding encoding, final int k, final int numWorkers, final int length) {
        this(encoding, k, Quantization.scaleBits(numWorkers), length, false);
    }

    /** @param scaleBits B(n) */
    private VectorCodec(final Encoding encoding, final int k, final int scaleBits, final int length,
                        final boolean view) {
        if (encoding == Encoding.FP64_SPLIT && (k & 1) != 0) {
            throw new IllegalArgumentException("FP64_SPLIT needs an even k, got " + k);
        }
        this.encoding = encoding;
        this.k = k;
        this.elementsPerBlock = encoding.elementsPerPacket(k);
        this.length = length;
        this.blocks = (int) ((length + (long) elementsPerBlock - 1) / elementsPerBlock);
        this.b = scaleBits;
        this.localExponents = new short[blocks];
        // A part encodes through the whole's lanes.
        this.lanes = view ? null : new int[k];
    }

    /** Codec for a {@code float[]}: FP32_BLOCK. */
    public static VectorCodec forFloats(final float[] in, final float[] out, final int k, final int numWorkers) {
        return new FloatBlock(in, out, k, numWorkers);
    }

    /** Codec for a {@code double[]}: FP64_SPLIT when {@code fp64}, else FP32_BLOCK. */
    public static VectorCodec forDoubles(final double[] in, final double[] out, final int k, final int numWorkers,
                                         final boolean fp64) {
        return fp64 ? new DoubleSplit(in, out, k, numWorkers) : new DoubleBlock(in, out, k, numWorkers);
    }

    /** Codec for an {@code int[]}: INT32, sums wrap modulo 2^32. */
    public static VectorCodec forInts(final int[] in, final int[] out, final int k, final int numWorkers) {
        return new Ints(in, out, k, numWorkers);
    }

    public Encoding encoding() {
        return encoding;
    }

    public int k() {
        return k;
    }

    public int elementsPerBlock() {
        return elementsPerBlock;
    }

    /** Number of vector elements. */
    public int length() {
        return length;
    }

    /** Number of blocks C. */
    public int blocks() {
        return blocks;
    }

    /** This worker's exponent of block {@code block} (NONE for INT32 or an all-zero block). */
    public short localExponent(final int block) {
        return localExponents[block];
    }

    /** Writes the k payload lanes of {@code block}, quantized with global exponent {@code e}, at {@code offset}. */
    public abstract void encode(int block, short e, ByteBuf buf, int offset);

    /** Reads the k summed lanes of {@code block} at {@code offset} and stores the dequantized values. */
    public abstract void decode(int block, short e, ByteBuf buf, int offset);

    /**
     * Stores in the output what the switch returns to a job whose only worker is this one: each block
     * encoded with its own exponent (the maximum over one worker), summed over that one contribution and
     * decoded, through the same {@link #encode} and {@link #decode} as the packets. The bits are those of
     * an allreduce in a one-worker job, without a packet. The codec must be made for one worker.
     */
    public final void sumAlone() {
        if (b != Quantization.scaleBits(1)) {
            throw new IllegalStateException("sumAlone needs a codec made for one worker (B = "
                    + Quantization.scaleBits(1) + "), this one has B = " + b);
        }
        final ByteBuf payload = Unpooled.buffer(4 * k, 4 * k);
        try {
            for (int c = 0; c < blocks; c++) {
                encode(c, localExponents[c], payload, 0);
                decode(c, localExponents[c], payload, 0);
            }
        } finally {
            payload.release();
        }
    }

    /**
     * Blocks {@code first .. first + count - 1} of this codec as a codec of their own: block {@code i} of the
     * part is block {@code first + i} here, with the same input, output, exponents and quantization. A sharded
     * job streams each shard's run of blocks through such a part; the bits of every block are those of the whole.
     * The part shares this codec's scratch lanes, so parts and whole must be used by one thread (the worker's
     * event loop).
     */
    public final VectorCodec part(final int first, final int count) {
        if (first < 0 || count < 0 || first + count > blocks) {
            throw new IllegalArgumentException("blocks " + first + ".." + (first + count - 1) + " outside the "
                    + blocks + " blocks of this vector");
        }
        return new Part(this, first, count);
    }

    /** Writes k zero lanes (a look-ahead packet that carries no data yet). */
    public final void encodeZeros(final ByteBuf buf, final int offset) {
        buf.setZero(offset, 4 * k);
    }

    protected final int blockStart(final int block) {
        return block * elementsPerBlock;
    }

    protected final int blockEnd(final int block) {
        return Math.min(length, (block + 1) * elementsPerBlock);
    }

    /** Computes the local exponents; called once by the subclasses' constructors. */
    protected final void scanExponents(final DoubleAt values) {
        for (int c = 0; c < blocks; c++) {
            double max = 0.0;
            for (int i = blockStart(c), end = blockEnd(c); i < end; i++) {
                final double v = values.at(i);
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException("input element " + i + " is " + v
                            + "; only finite values can be aggregated");
                }
                max = Math.max(max, Math.abs(v));
            }
            localExponents[c] = Quantization.exponentOf(max);
        }
    }

    /** Indexed read of the input as double, so one scan serves float[] and double[]. */
    @FunctionalInterface
    protected interface DoubleAt {
        double at(int i);
    }

    private static void checkLengths(final int in, final int out) {
        if (in != out) {
            throw new IllegalArgumentException("output length " + out + " differs from input length " + in);
        }
    }

    /** FP32_BLOCK over any array of real numbers: one int32 lane per element. */
    private abstract static class Fp32Block extends VectorCodec {
        Fp32Block(final int k, final int n, final int length) {
            super(Encoding.FP32_BLOCK, k, n, length);
        }

        abstract double in(int i);

        abstract void out(int i, double v);

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int shift = Quantization.shift32(e, b);
            final double f = Quantization.factor(shift);
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            for (int j = 0; j < count; j++) {
                lanes[j] = (int) Math.rint(Quantization.scale(in(start + j), shift, f));
            }
            Arrays.fill(lanes, count, k(), 0);
            Wire.writeInts(buf, offset, lanes, 0, k());
        }

        @Override
        public void decode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            Wire.readInts(buf, offset, lanes, 0, count);
            if (e == Wire.EXPONENT_NONE) {
                for (int j = 0; j < count; j++) {
                    out(start + j, 0.0);
                }
                return;
            }
            final int shift = e - b;
            final double f = Quantization.factor(shift);
            for (int j = 0; j < count; j++) {
                out(start + j, Quantization.saturate(Quantization.scale(lanes[j], shift, f)));
            }
        }
    }

    private static final class FloatBlock extends Fp32Block {
        private final float[] in;
        private final float[] out;

        FloatBlock(final float[] in, final float[] out, final int k, final int n) {
            super(k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = in;
            this.out = out;
            scanExponents(i -> in[i]);
        }

        @Override
        double in(final int i) {
            return in[i];
        }

        @Override
        void out(final int i, final double v) {
            out[i] = (float) v;
        }
    }

    private static final class DoubleBlock extends Fp32Block {
        private final double[] in;
        private final double[] out;

        DoubleBlock(final double[] in, final double[] out, final int k, final int n) {
            super(k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = in;
            this.out = out;
            scanExponents(i -> in[i]);
        }

        @Override
        double in(final int i) {
            return in[i];
        }

        @Override
        void out(final int i, final double v) {
            out[i] = v;
        }
    }

    private static final class DoubleSplit extends VectorCodec {
        private final double[] in;
        private final double[] out;

        DoubleSplit(final double[] in, final double[] out, final int k, final int n) {
            super(Encoding.FP64_SPLIT, k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = in;
            this.out = out;
            scanExponents(i -> in[i]);
        }

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int shift = Quantization.shift64(e, b);
            final double f = Quantization.factor(shift);
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            for (int j = 0; j < count; j++) {
                final long q = (long) Math.rint(Quantization.scale(in[start + j], shift, f));
                lanes[2 * j] = Quantization.high(q, b);
                lanes[2 * j + 1] = Quantization.low(q, b);
            }
            Arrays.fill(lanes, 2 * count, k(), 0);
            Wire.writeInts(buf, offset, lanes, 0, k());
        }

        @Override
        public void decode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            Wire.readInts(buf, offset, lanes, 0, 2 * count);
            if (e == Wire.EXPONENT_NONE) {
                Arrays.fill(out, start, start + count, 0.0);
                return;
            }
            // Same arithmetic as Quantization.dequantize64, with 2^shift computed once per block.
            final int shift = e - 2 * b - 1;
            final double f = Quantization.factor(shift);
            for (int j = 0; j < count; j++) {
                final long t = ((long) lanes[2 * j] << (b + 1)) + lanes[2 * j + 1];
                out[start + j] = Quantization.saturate(Quantization.scale((double) t, shift, f));
            }
        }
    }

    private static final class Ints extends VectorCodec {
        private final int[] in;
        private final int[] out;

        Ints(final int[] in, final int[] out, final int k, final int n) {
            super(Encoding.INT32, k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = in;
            this.out = out;
            noExponents();
        }

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            System.arraycopy(in, start, lanes, 0, count);
            Arrays.fill(lanes, count, k(), 0);
            Wire.writeInts(buf, offset, lanes, 0, k());
        }

        @Override
        public void decode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int start = blockStart(block);
            Wire.readInts(buf, offset, out, start, blockEnd(block) - start);
        }
    }

    /** A run of another codec's blocks (see {@link #part}). */
    private static final class Part extends VectorCodec {
        private final VectorCodec whole;
        private final int first;

        Part(final VectorCodec whole, final int first, final int count) {
            super(whole.encoding, whole.k, whole.b, count == 0 ? 0
                    : Math.min(whole.length, (first + count) * whole.elementsPerBlock) - first * whole.elementsPerBlock,
                    true);
            this.whole = whole;
            this.first = first;
            System.arraycopy(whole.localExponents, first, localExponentsOf(this), 0, count);
        }

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            whole.encode(first + block, e, buf, offset);
        }

        @Override
        public void decode(final int block, final short e, final ByteBuf buf, final int offset) {
            whole.decode(first + block, e, buf, offset);
        }
    }

    private static short[] localExponentsOf(final VectorCodec c) {
        return c.localExponents;
    }

    /** Marks every block as carrying no exponent (INT32). */
    protected final void noExponents() {
        Arrays.fill(localExponents, Wire.EXPONENT_NONE);
    }
}

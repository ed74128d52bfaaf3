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
    /** Whether this codec holds every term of the sum (one worker), so that {@link #sumAlone} is its result. */
    private boolean alone;

    private VectorCodec(final Encoding encoding, final int k, final int numWorkers, final int length) {
        this(encoding, k, Quantization.scaleBits(numWorkers), length, false);
        this.alone = numWorkers == 1;
    }

    /** @param scaleBits B(n) */
    private VectorCodec(
            final Encoding encoding, final int k, final int scaleBits, final int length, final boolean view) {
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
    public static VectorCodec forDoubles(
            final double[] in, final double[] out, final int k, final int numWorkers, final boolean fp64) {
        return fp64 ? new DoubleSplit(in, out, k, numWorkers) : new DoubleBlock(in, out, k, numWorkers);
    }

    /**
     * Codec for one worker's share of a sum of {@code terms} vectors over all workers: its vectors {@code in} (each
     * worker holds some of the terms, e.g. one per source partition it read), FP64_SPLIT when {@code fp64}, else
     * FP32_BLOCK. Each vector is quantized on its own, with the block exponents agreed over every worker (a worker's
     * local exponent is the largest of its vectors'), and the worker sends the integer sum of its vectors' lanes. As
     * integers add exactly, in any order, the result is the same bits however the terms are spread over the workers
     * and in whichever order each worker holds them: it depends only on the terms. The headroom {@code B(terms)}
     * covers the sum of every term, so it is smaller than a per-worker {@code B(n)} when a worker holds several.
     *
     * @param out   the result, which may be one of {@code in} (each block is read before its result is written)
     * @param terms the vectors summed over all workers, at least {@code in.length}
     */
    public static VectorCodec forTerms(
            final double[][] in, final double[] out, final int k, final int terms, final boolean fp64) {
        if (in.length < 1 || terms < in.length) {
            throw new IllegalArgumentException(
                    "a worker holds 1.." + terms + " of the " + terms + " terms, got " + in.length);
        }
        final int bits = headroomBits(terms);
        final VectorCodec c = fp64 ? new DoubleSplit(in, out, k, bits) : new DoubleBlock(in, out, k, bits);
        c.alone = in.length == terms;
        return c;
    }

    /** The largest {@code b} with {@code terms * 2^b <= 2^31 - 1}: B(n) for any number of terms. */
    static int headroomBits(final int terms) {
        if (terms < 1 || terms > 1 << 24) {
            throw new IllegalArgumentException("terms of a sum must be 1.." + (1 << 24) + ", got " + terms);
        }
        int b = 30;
        while (((long) terms << b) > Integer.MAX_VALUE) {
            b--;
        }
        return b;
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
     * an allreduce in a one-worker job, without a packet. The codec must be made for one worker, or hold every term
     * of a sum ({@link #forTerms}).
     */
    public final void sumAlone() {
        if (!alone) {
            throw new IllegalStateException("sumAlone needs a codec made for one worker, or holding every term of "
                    + "the sum (this one has B = " + b + ")");
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
            throw new IllegalArgumentException("blocks " + first + ".." + (first + count - 1) + " outside the " + blocks
                    + " blocks of this vector");
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
                    throw new IllegalArgumentException(
                            "input element " + i + " is " + v + "; only finite values can be aggregated");
                }
                max = Math.max(max, Math.abs(v));
            }
            localExponents[c] = Quantization.exponentOf(max);
        }
    }

    /** As {@link #scanExponents(DoubleAt)}, over several vectors of one length: each block's largest magnitude. */
    protected final void scanExponents(final double[][] parts) {
        for (int c = 0; c < blocks; c++) {
            double max = 0.0;
            for (int p = 0; p < parts.length; p++) {
                final double[] v = parts[p];
                for (int i = blockStart(c), end = blockEnd(c); i < end; i++) {
                    final double x = v[i];
                    if (!Double.isFinite(x)) {
                        throw new IllegalArgumentException(
                                "input element " + i + (parts.length > 1 ? " of vector " + p : "") + " is " + x
                                        + "; only finite values can be aggregated");
                    }
                    max = Math.max(max, Math.abs(x));
                }
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

        /** With headroom {@code bits} ({@code withBits} only tells this constructor from the other). */
        Fp32Block(final int k, final int bits, final int length, final boolean withBits) {
            super(Encoding.FP32_BLOCK, k, bits, length, false);
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

    /** FP32_BLOCK over one vector, or over the integer sum of several, each quantized on its own. */
    private static final class DoubleBlock extends Fp32Block {
        private final double[][] in;
        private final double[] out;

        DoubleBlock(final double[] in, final double[] out, final int k, final int n) {
            super(k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = new double[][] {in};
            this.out = out;
            scanExponents(i -> in[i]);
        }

        /** Several vectors, with headroom {@code bits}. */
        DoubleBlock(final double[][] in, final double[] out, final int k, final int bits) {
            super(k, bits, in[0].length, true);
            for (final double[] v : in) {
                checkLengths(v.length, out.length);
            }
            this.in = in.clone();
            this.out = out;
            scanExponents(this.in);
        }

        @Override
        double in(final int i) {
            return in[0][i];
        }

        @Override
        void out(final int i, final double v) {
            out[i] = v;
        }

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            if (in.length == 1) {
                super.encode(block, e, buf, offset);
                return;
            }
            final int shift = Quantization.shift32(e, b);
            final double f = Quantization.factor(shift);
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            for (int j = 0; j < count; j++) {
                long q = 0;
                for (final double[] v : in) {
                    q += (long) Math.rint(Quantization.scale(v[start + j], shift, f));
                }
                lanes[j] = (int) q; // |q| <= terms here * 2^B: within int32 by B(terms)
            }
            Arrays.fill(lanes, count, k(), 0);
            Wire.writeInts(buf, offset, lanes, 0, k());
        }
    }

    /** FP64_SPLIT over one vector, or over the integer sum of several, each quantized on its own. */
    private static final class DoubleSplit extends VectorCodec {
        private final double[][] in;
        private final double[] out;

        DoubleSplit(final double[] in, final double[] out, final int k, final int n) {
            super(Encoding.FP64_SPLIT, k, n, in.length);
            checkLengths(in.length, out.length);
            this.in = new double[][] {in};
            this.out = out;
            scanExponents(i -> in[i]);
        }

        /** Several vectors, with headroom {@code bits}. */
        DoubleSplit(final double[][] in, final double[] out, final int k, final int bits) {
            super(Encoding.FP64_SPLIT, k, bits, in[0].length, false);
            for (final double[] v : in) {
                checkLengths(v.length, out.length);
            }
            this.in = in.clone();
            this.out = out;
            scanExponents(this.in);
        }

        @Override
        public void encode(final int block, final short e, final ByteBuf buf, final int offset) {
            final int shift = Quantization.shift64(e, b);
            final double f = Quantization.factor(shift);
            final int start = blockStart(block);
            final int count = blockEnd(block) - start;
            if (in.length == 1) {
                final double[] v = in[0];
                for (int j = 0; j < count; j++) {
                    final long q = (long) Math.rint(Quantization.scale(v[start + j], shift, f));
                    lanes[2 * j] = Quantization.high(q, b);
                    lanes[2 * j + 1] = Quantization.low(q, b);
                }
            } else {
                for (int j = 0; j < count; j++) {
                    // each |term| <= 2^(2B+1), so the sum of this worker's terms fits a long, and its high lane
                    // (at most its terms times 2^B) an int32 whose sum over all workers does too, by B(terms)
                    long q = 0;
                    for (final double[] v : in) {
                        q += (long) Math.rint(Quantization.scale(v[start + j], shift, f));
                    }
                    lanes[2 * j] = Quantization.high(q, b);
                    lanes[2 * j + 1] = Quantization.low(q, b);
                }
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
            super(
                    whole.encoding,
                    whole.k,
                    whole.b,
                    count == 0
                            ? 0
                            : Math.min(whole.length, (first + count) * whole.elementsPerBlock)
                                    - first * whole.elementsPerBlock,
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

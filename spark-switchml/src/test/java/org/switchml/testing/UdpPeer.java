package org.switchml.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Arrays;

/** A raw loopback UDP endpoint for tests: sends arbitrary datagrams, receives with a bounded wait. */
public final class UdpPeer implements AutoCloseable {
    private final DatagramChannel channel;
    private final Selector selector;
    private final ByteBuffer buf = ByteBuffer.allocate(65_536);

    /** Binds a socket on a free loopback port. */
    public UdpPeer() {
        try {
            channel = DatagramChannel.open();
            channel.bind(new InetSocketAddress("127.0.0.1", 0));
            channel.configureBlocking(false);
            selector = Selector.open();
            channel.register(selector, SelectionKey.OP_READ);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The socket's address. */
    public InetSocketAddress address() {
        try {
            return (InetSocketAddress) channel.getLocalAddress();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends one datagram. */
    public void send(final byte[] datagram, final InetSocketAddress to) {
        try {
            channel.send(ByteBuffer.wrap(datagram), to);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next datagram, or null when none arrives within {@code timeoutMs}. */
    public byte[] receive(final long timeoutMs) {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        try {
            while (true) {
                final byte[] got = poll();
                if (got != null) {
                    return got;
                }
                final long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return null;
                }
                selector.select(left);
                selector.selectedKeys().clear();
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A datagram already queued, or null (never waits). */
    public byte[] poll() {
        try {
            buf.clear();
            if (channel.receive(buf) == null) {
                return null;
            }
            buf.flip();
            return Arrays.copyOf(buf.array(), buf.limit());
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            selector.close();
            channel.close();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A SwitchML datagram (docs/protocol.md section 2) with the given fields and payload. */
    public static byte[] datagram(
            final int kind,
            final int set,
            final int k,
            final int jobId,
            final int generation,
            final int rank,
            final int slot,
            final int exponent,
            final int seq,
            final int secret,
            final int[] payload) {
        final ByteBuffer b = ByteBuffer.allocate(24 + 4 * payload.length).order(ByteOrder.BIG_ENDIAN);
        b.put((byte) ((1 << 4) | kind))
                .put((byte) (set << 7))
                .putShort((short) k)
                .putInt(jobId)
                .putShort((short) generation)
                .put((byte) rank)
                .put((byte) 0)
                .putShort((short) slot)
                .putShort((short) exponent)
                .putInt(seq)
                .putInt(secret);
        for (final int v : payload) {
            b.putInt(v);
        }
        return b.array();
    }

    /** A contribution of packet g of a rank (slot g mod S, set (g div S) mod 2, seq g), exponent NONE. */
    public static byte[] contribution(
            final int jobId,
            final int generation,
            final int secret,
            final int rank,
            final int g,
            final int pool,
            final int[] payload) {
        return datagram(
                1, (g / pool) % 2, payload.length, jobId, generation, rank, g % pool, -32768, g, secret, payload);
    }
}

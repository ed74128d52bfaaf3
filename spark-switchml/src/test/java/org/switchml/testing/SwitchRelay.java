package org.switchml.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.switchml.protocol.SwitchAddress;

/**
 * A real UDP hop on loopback that stands where a switch's lanes are, for a job's workers. Workers are told the
 * switch is at {@link #address()}: one socket of the relay per lane of the real switch. The switch is told the
 * workers are at {@link #workerFaces()}: one socket of the relay per worker. What a worker sends to lane i leaves
 * the relay from that worker's face to the switch's lane i; what the switch sends to a face leaves the relay
 * from lane i's socket to that worker. Order is kept on every path (one thread relays everything); a datagram
 * from anyone else is dropped and counted.
 *
 * <p>So a test can send datagrams of its own from the very address and port a worker takes for the switch's
 * lane ({@link #sendFromLane}): the worker's sender check passes, and what rejects such a datagram, if anything,
 * is a later check of the receive rule. (A socket cannot be bound to the real switch's address and port while
 * the switch holds them, and Java has no raw sockets to forge a source address.)
 */
public final class SwitchRelay implements AutoCloseable {
    private final SwitchAddress target;
    private final List<InetSocketAddress> targetLanes;
    private final List<InetSocketAddress> workers;
    private final List<DatagramChannel> lanes = new ArrayList<>();
    private final List<DatagramChannel> faces = new ArrayList<>();
    private final Selector selector;
    private final Thread thread;
    private final AtomicLong relayed = new AtomicLong();
    private final AtomicLong stray = new AtomicLong();
    private volatile boolean closed;

    private SwitchRelay(final SwitchAddress target, final List<InetSocketAddress> workers) throws IOException {
        this.target = target;
        this.targetLanes = target.laneAddresses();
        this.workers = List.copyOf(workers);
        this.selector = Selector.open();
        try {
            for (int lane = 0; lane < target.lanes(); lane++) {
                lanes.add(open(target.host(), lane));
            }
            for (int r = 0; r < workers.size(); r++) {
                faces.add(open(target.host(), -1 - r));
            }
        } catch (final IOException | RuntimeException e) {
            closeChannels();
            throw e;
        }
        this.thread = new Thread(this::relay, "switch-relay");
        thread.setDaemon(true);
    }

    /** A relay between {@code workers} (rank order) and the switch at {@code target}, on target's host. */
    public static SwitchRelay start(final SwitchAddress target, final List<InetSocketAddress> workers) {
        try {
            final SwitchRelay r = new SwitchRelay(target, workers);
            r.thread.start();
            return r;
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot open the relay's sockets on " + target.host(), e);
        }
    }

    /** A socket on a free port of {@code host}, registered with the selector; its attachment says what it is. */
    private DatagramChannel open(final String host, final int attachment) throws IOException {
        final DatagramChannel c = DatagramChannel.open();
        try {
            c.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
            c.bind(new InetSocketAddress(host, 0));
            c.configureBlocking(false);
            c.register(selector, SelectionKey.OP_READ, attachment);
            return c;
        } catch (final IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** The switch as the workers know it: the relay's lane sockets, in lane order. */
    public SwitchAddress address() {
        final List<Integer> ports = new ArrayList<>();
        for (final DatagramChannel c : lanes) {
            ports.add(local(c).getPort());
        }
        return new SwitchAddress(target.host(), ports);
    }

    /** The workers as the switch knows them: the relay's socket for each rank. */
    public List<InetSocketAddress> workerFaces() {
        final List<InetSocketAddress> out = new ArrayList<>();
        for (final DatagramChannel c : faces) {
            out.add(local(c));
        }
        return out;
    }

    /**
     * Sends {@code datagram} to {@code to} from lane {@code lane}'s socket, the address and port the workers
     * take for that lane of the switch; waits (bounded) while the socket's send buffer is full.
     */
    public void sendFromLane(final int lane, final byte[] datagram, final InetSocketAddress to) {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            while (lanes.get(lane).send(ByteBuffer.wrap(datagram), to) == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("relay lane " + lane + ": could not send to " + to + " for 10 s");
                }
                LockSupport.parkNanos(50_000);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException("relay lane " + lane + ": cannot send to " + to, e);
        }
    }

    /** Datagrams passed on so far, both ways. */
    public long relayed() {
        return relayed.get();
    }

    /** Datagrams dropped because they came from neither a worker nor the switch's lanes (or could not be sent). */
    public long stray() {
        return stray.get();
    }

    private void relay() {
        final ByteBuffer buf = ByteBuffer.allocate(65_536);
        try {
            while (!closed) {
                selector.select(100);
                for (final SelectionKey key : selector.selectedKeys()) {
                    final DatagramChannel from = (DatagramChannel) key.channel();
                    final int what = (Integer) key.attachment();
                    InetSocketAddress sender;
                    buf.clear();
                    while ((sender = (InetSocketAddress) from.receive(buf)) != null) {
                        buf.flip();
                        pass(what, sender, buf);
                        buf.clear();
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (final IOException e) {
            if (!closed) {
                throw new UncheckedIOException("the relay stopped", e);
            }
        }
    }

    /** Passes on a datagram that came to lane {@code what} (>= 0) or to face -1 - {@code what}. */
    private void pass(final int what, final InetSocketAddress sender, final ByteBuffer d) {
        final DatagramChannel out;
        final InetSocketAddress to;
        if (what >= 0) {
            final int rank = workers.indexOf(sender);
            out = rank < 0 ? null : faces.get(rank);
            to = targetLanes.get(what);
        } else {
            final int lane = targetLanes.indexOf(sender);
            out = lane < 0 ? null : lanes.get(lane);
            to = workers.get(-1 - what);
        }
        boolean sent = false;
        if (out != null) {
            try {
                sent = out.send(d, to) > 0;
            } catch (final IOException e) {
                // A datagram the kernel would not take is lost, as on any hop; the relay goes on.
            }
        }
        if (sent) {
            relayed.incrementAndGet();
        } else {
            stray.incrementAndGet();
        }
    }

    private static InetSocketAddress local(final DatagramChannel c) {
        try {
            return (InetSocketAddress) c.getLocalAddress();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void closeChannels() {
        final List<DatagramChannel> all = new ArrayList<>(lanes);
        all.addAll(faces);
        for (final DatagramChannel c : all) {
            try {
                c.close();
            } catch (final IOException ignored) {
                // Closing anyway.
            }
        }
        try {
            selector.close();
        } catch (final IOException ignored) {
            // Closing anyway.
        }
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeChannels();
    }
}

package org.switchml.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A real TCP proxy on loopback that makes a network slow: every chunk it reads is delivered, in order, a set
 * delay later. It can also freeze the connections open at a moment (they deliver nothing, and break nothing,
 * until thawed: a path that stalls without failing) and drop everything (a peer that vanished). Each connection
 * has two threads per direction; everything ends when the proxy closes.
 */
public final class LatencyProxy implements AutoCloseable {
    /** One accepted connection and its way to the target. */
    private static final class Link {
        final Socket in;
        final Socket out;
        volatile boolean frozen;

        Link(final Socket in, final Socket out) {
            this.in = in;
            this.out = out;
        }

        void close() {
            for (final Socket s : new Socket[] {in, out}) {
                try {
                    s.close();
                } catch (final IOException ignored) {
                    // Closing anyway.
                }
            }
        }
    }

    private record Chunk(byte[] bytes, long dueNs) {}

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Link> links = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile long delayNs;
    private volatile boolean dropAll;
    private volatile boolean closed;

    private LatencyProxy(final ServerSocket listener, final InetSocketAddress target, final long delayMs) {
        this.listener = listener;
        this.target = target;
        this.delayNs = TimeUnit.MILLISECONDS.toNanos(delayMs);
    }

    /** A proxy to {@code target} on a free loopback port, delaying every chunk by {@code delayMs} each way. */
    public static LatencyProxy start(final InetSocketAddress target, final long delayMs) throws IOException {
        final LatencyProxy p =
                new LatencyProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), target, delayMs);
        p.spawn("proxy-accept", p::acceptLoop);
        return p;
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connectionsAccepted() {
        return accepted.get();
    }

    /** Delays chunks read from now on by {@code ms} each way. */
    public void delayMs(final long ms) {
        delayNs = TimeUnit.MILLISECONDS.toNanos(ms);
    }

    /** Freezes the connections open now: they hold what they read until {@link #thaw()}; later ones flow. */
    public synchronized void freezeOpenConnections() {
        for (final Link l : links) {
            l.frozen = true;
        }
    }

    /** Lets every frozen connection deliver again. */
    public synchronized void thaw() {
        for (final Link l : links) {
            l.frozen = false;
        }
    }

    /** Drops everything from now on, on every connection, open or new (a peer that vanished). */
    public void dropAll() {
        dropAll = true;
    }

    private void acceptLoop() {
        while (!closed) {
            final Socket in;
            try {
                in = listener.accept();
            } catch (final IOException e) {
                return; // closed
            }
            accepted.incrementAndGet();
            final Socket out = new Socket();
            try {
                out.connect(target, 5_000);
            } catch (final IOException e) {
                try {
                    in.close();
                } catch (final IOException ignored) {
                    // Nothing to tell.
                }
                continue;
            }
            final Link l = new Link(in, out);
            synchronized (this) {
                if (closed) {
                    l.close();
                    return;
                }
                links.add(l);
            }
            pipe(l, in, out, "up");
            pipe(l, out, in, "down");
        }
    }

    /** Copies {@code from} to {@code to} through a queue that holds each chunk until it is due. */
    private void pipe(final Link l, final Socket from, final Socket to, final String way) {
        final BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        spawn("proxy-read-" + way, () -> {
            final byte[] buf = new byte[16 * 1024];
            try (InputStream is = from.getInputStream()) {
                int n;
                while ((n = is.read(buf)) >= 0) {
                    queue.add(new Chunk(Arrays.copyOf(buf, n), System.nanoTime() + delayNs));
                }
            } catch (final IOException e) {
                // Closed.
            }
            queue.add(new Chunk(null, System.nanoTime() + delayNs));
        });
        spawn("proxy-write-" + way, () -> {
            try (OutputStream os = to.getOutputStream()) {
                while (!closed) {
                    final Chunk c = queue.take();
                    if (c.bytes() == null) {
                        to.shutdownOutput();
                        return;
                    }
                    while (!closed && (System.nanoTime() - c.dueNs() < 0 || l.frozen)) {
                        // Holding the chunk: until it is due, and while its connection is frozen.
                        LockSupport.parkNanos(Math.max(
                                100_000, Math.min(TimeUnit.MILLISECONDS.toNanos(5), c.dueNs() - System.nanoTime())));
                    }
                    if (!dropAll) {
                        os.write(c.bytes());
                        os.flush();
                    }
                }
            } catch (final IOException e) {
                // Closed.
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private synchronized void spawn(final String name, final Runnable r) {
        final Thread t = new Thread(r, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    @Override
    public void close() {
        final List<Thread> all;
        synchronized (this) {
            closed = true;
            for (final Link l : links) {
                l.close();
            }
            all = new ArrayList<>(threads);
        }
        try {
            listener.close();
        } catch (final IOException ignored) {
            // Closing anyway.
        }
        for (final Thread t : all) {
            t.interrupt();
        }
    }
}

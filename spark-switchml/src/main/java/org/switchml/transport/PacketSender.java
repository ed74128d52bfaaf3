package org.switchml.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The one way our endpoints put datagrams on the wire: writes without flushing (so a burst leaves in
 * one batch at {@link #flush()}), and applies the endpoint's {@link FaultPlan}.
 *
 * <p>Confined to the channel's event loop thread, like the channel itself.
 */
public final class PacketSender {
    private final Channel channel;
    private final FaultPlan faults;
    private final SplittableRandom random;
    private long sent;
    private long dropped;
    private boolean dirty;
    /** Datagrams the fault plan holds back (reordering), not yet written; event loop only. */
    private final Set<DatagramPacket> held = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * @param channel the endpoint's channel; datagrams are written to it
     * @param faults  the faults to apply to what this endpoint sends ({@link FaultPlan#NONE} in production)
     */
    public PacketSender(final Channel channel, final FaultPlan faults) {
        this.channel = channel;
        this.faults = faults;
        this.random = new SplittableRandom(faults.seed());
        // A held datagram whose scheduled write never runs (the event loop shut down with the channel)
        // would leak its buffer: release what is still held when the channel closes.
        channel.closeFuture().addListener(f -> releaseHeld());
    }

    /** Queues {@code buf} (ownership passes to this call) for {@code recipient}. */
    public void send(final ByteBuf buf, final InetSocketAddress recipient) {
        if (faults.active() && !faultsAllow(buf, recipient)) {
            return;
        }
        sent++;
        channel.write(new DatagramPacket(buf, recipient), channel.voidPromise());
        dirty = true;
    }

    private boolean faultsAllow(final ByteBuf buf, final InetSocketAddress recipient) {
        if (sent + dropped < faults.dropFirst() || random.nextDouble() < faults.loss()) {
            dropped++;
            buf.release();
            return false;
        }
        if (faults.duplicate() > 0 && random.nextDouble() < faults.duplicate()) {
            sent++;
            channel.write(new DatagramPacket(buf.retainedDuplicate(), recipient), channel.voidPromise());
        }
        if (faults.reorder() > 0 && random.nextDouble() < faults.reorder()) {
            final long delay = 1 + random.nextLong(faults.maxReorderDelayMicros());
            final DatagramPacket late = new DatagramPacket(buf, recipient);
            held.add(late);
            channel.eventLoop()
                    .schedule(
                            () -> {
                                if (held.remove(late)) {
                                    channel.writeAndFlush(late, channel.voidPromise());
                                }
                            },
                            delay,
                            TimeUnit.MICROSECONDS);
            sent++;
            return false;
        }
        return true;
    }

    private void releaseHeld() {
        for (final DatagramPacket p : held) {
            p.release();
        }
        held.clear();
    }

    /** Flushes what {@link #send} queued. */
    public void flush() {
        if (dirty) {
            dirty = false;
            channel.flush();
        }
    }

    /** Datagrams put on the wire (duplicates included). */
    public long sent() {
        return sent;
    }

    /** Datagrams the fault plan dropped. */
    public long dropped() {
        return dropped;
    }
}

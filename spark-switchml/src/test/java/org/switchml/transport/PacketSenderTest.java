package org.switchml.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.switchml.testing.LeakDetection;
import org.switchml.testing.Seeds;

/** The fault-injecting sender on a real UDP socket. */
class PacketSenderTest {

    /**
     * Datagrams held back for reordering whose write is still scheduled when the endpoint's event loop shuts
     * down (a switch restart, a closed client) are released, not leaked: the scheduled writes are cancelled
     * with the loop, so the sender itself must give their buffers back.
     */
    @Test
    void heldBackDatagramsAreReleasedWhenTheLoopShutsDown() throws Exception {
        final long seed = Seeds.seed("PacketSenderTest.held", 20261201L);
        LeakDetection.check("the tests before PacketSenderTest");
        final EventLoopGroup group = Transports.newGroup(1, "sender-test");
        final Channel channel = Transports.datagram(group.next(), new ChannelInboundHandlerAdapter())
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        final InetSocketAddress self = (InetSocketAddress) channel.localAddress();
        final int packets = 64;
        final long sent = channel.eventLoop()
                .submit(() -> {
                    final PacketSender sender = new PacketSender(channel, new FaultPlan(0, 0, 0.99, 0, seed));
                    for (int i = 0; i < packets; i++) {
                        final ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(32);
                        buf.writeLong(i);
                        sender.send(buf, self);
                    }
                    sender.flush();
                    // Shut down from the loop itself, with no quiet period: the held datagrams' writes (delayed up to
                    // 2 ms) are cancelled before any of them is due.
                    group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
                    return sender.sent();
                })
                .get(10, TimeUnit.SECONDS);
        assertEquals(packets, sent, "every datagram counts as sent, held or not");
        assertTrue(group.terminationFuture().await(10, TimeUnit.SECONDS), "the event loop did not stop within 10 s");
        final List<String> leaks = LeakDetection.collect();
        assertTrue(leaks.isEmpty(), leaks.size() + " buffer(s) leaked:\n" + String.join("\n----\n", leaks));
    }

    /**
     * A plan's hold-back bound reaches the wire: with reordered datagrams held up to 30 ms, every datagram
     * still arrives, and some arrive later than the default bound of 2 ms would allow (64 datagrams, each
     * held with probability 0.99 for a delay drawn uniformly up to 30 ms: that none is held 10 ms or more
     * has a probability below 10^-29).
     */
    @Test
    void reorderedDatagramsAreHeldBackUpToThePlansBound() throws Exception {
        final long seed = Seeds.seed("PacketSenderTest.holdBack", 20261202L);
        final int packets = 64;
        final long[] arrived = new long[packets];
        final CountDownLatch all = new CountDownLatch(packets);
        final EventLoopGroup group = Transports.newGroup(1, "hold-back-test");
        try {
            final Channel channel = Transports.datagram(group.next(), new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
                            final DatagramPacket p = (DatagramPacket) msg;
                            arrived[(int) p.content().readLong()] = System.nanoTime();
                            p.release();
                            all.countDown();
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0))
                    .sync()
                    .channel();
            final InetSocketAddress self = (InetSocketAddress) channel.localAddress();
            final FaultPlan plan = new FaultPlan(0, 0, 0.99, 0, seed).withMaxReorderDelayMicros(30_000);
            final long sentAt = channel.eventLoop()
                    .submit(() -> {
                        final PacketSender sender = new PacketSender(channel, plan);
                        final long t = System.nanoTime();
                        for (int i = 0; i < packets; i++) {
                            final ByteBuf buf = channel.alloc().directBuffer(8);
                            buf.writeLong(i);
                            sender.send(buf, self);
                        }
                        sender.flush();
                        return t;
                    })
                    .get(10, TimeUnit.SECONDS);
            assertTrue(all.await(10, TimeUnit.SECONDS), all.getCount() + " of " + packets + " datagrams never arrived");
            final long latest = Arrays.stream(arrived).max().orElseThrow() - sentAt;
            assertTrue(
                    latest >= TimeUnit.MILLISECONDS.toNanos(10),
                    "the last datagram arrived "
                            + TimeUnit.NANOSECONDS.toMicros(latest)
                            + " microseconds after the burst was sent; a hold-back of up to 30 ms "
                            + "should have delayed some by 10 ms or more");
            channel.close().sync();
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
        }
    }
}

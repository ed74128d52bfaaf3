package org.switchml.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.Test;
import org.switchml.testing.LeakDetection;
import org.switchml.testing.Seeds;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        final InetSocketAddress self = (InetSocketAddress) channel.localAddress();
        final int packets = 64;
        final long sent = channel.eventLoop().submit(() -> {
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
        }).get(10, TimeUnit.SECONDS);
        assertEquals(packets, sent, "every datagram counts as sent, held or not");
        assertTrue(group.terminationFuture().await(10, TimeUnit.SECONDS), "the event loop did not stop within 10 s");
        final List<String> leaks = LeakDetection.collect();
        assertTrue(leaks.isEmpty(), leaks.size() + " buffer(s) leaked:\n" + String.join("\n----\n", leaks));
    }
}

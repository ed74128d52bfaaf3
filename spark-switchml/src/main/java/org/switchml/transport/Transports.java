package org.switchml.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * UDP plumbing shared by the switch and the client: native epoll where it loads, NIO otherwise, with
 * socket buffers large enough for a window of datagrams.
 */
public final class Transports {
    /** Largest UDP payload over IPv4; receive buffers are this large so no datagram is truncated. */
    public static final int MAX_DATAGRAM = 65_507;

    private static final int SOCKET_BUFFER_BYTES = 4 << 20;
    private static final boolean EPOLL = Epoll.isAvailable() && !Boolean.getBoolean("switchml.transport.nio");

    private Transports() {}

    /** Whether the native epoll transport is in use. */
    public static boolean nativeTransport() {
        return EPOLL;
    }

    /** A group of daemon event loop threads named {@code name-N}. */
    public static EventLoopGroup newGroup(final int threads, final String name) {
        final DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
        return EPOLL ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    /** A datagram bootstrap pinned to {@code loop}, with {@code handler} as its only handler. */
    public static Bootstrap datagram(final EventLoop loop, final ChannelHandler handler) {
        final Class<? extends DatagramChannel> type = EPOLL ? EpollDatagramChannel.class : NioDatagramChannel.class;
        return new Bootstrap()
                .group(loop)
                .channel(type)
                .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER_BYTES)
                .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(MAX_DATAGRAM))
                .handler(handler);
    }
}

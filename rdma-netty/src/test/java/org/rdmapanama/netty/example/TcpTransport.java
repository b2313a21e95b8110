package org.rdmapanama.netty.example;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.util.function.Supplier;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The plain-TCP transports the examples run on: what a Netty 4.2 user picks by
 * an IoHandler factory and two channel classes, and what the RDMA transport
 * will be a third value of.
 */
enum TcpTransport {
    NIO(NioIoHandler::newFactory, NioSocketChannel.class, NioServerSocketChannel.class),
    EPOLL(EpollIoHandler::newFactory, EpollSocketChannel.class, EpollServerSocketChannel.class);

    private final Supplier<IoHandlerFactory> factory;
    final Class<? extends SocketChannel> channelType;
    final Class<? extends ServerChannel> serverChannelType;

    TcpTransport(Supplier<IoHandlerFactory> factory, Class<? extends SocketChannel> channelType,
                 Class<? extends ServerChannel> serverChannelType) {
        this.factory = factory;
        this.channelType = channelType;
        this.serverChannelType = serverChannelType;
    }

    /** Skips the calling test where the transport's native part does not load (epoll off Linux x86-64). */
    void assumeAvailable() {
        if (this == EPOLL) {
            assumeTrue(Epoll.isAvailable(), () -> "epoll is not available: " + Epoll.unavailabilityCause());
        }
    }

    MultiThreadIoEventLoopGroup newGroup(int threads) {
        // The factory is made here, not in the constant: EpollIoHandler.newFactory() loads the native library.
        return new MultiThreadIoEventLoopGroup(threads, factory.get());
    }
}

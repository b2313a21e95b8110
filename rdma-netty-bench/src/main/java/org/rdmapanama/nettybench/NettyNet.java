package org.rdmapanama.nettybench;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.netty.RdmaServerSocketChannel;
import org.rdmapanama.netty.RdmaSocketChannel;
import org.rdmapanama.netty.RdmaTransport;

import java.net.InetAddress;

/**
 * A Netty transport as its user picks it: an IoHandler factory and two channel classes, with the address
 * servers bind to. The RDMA one owns its {@link RdmaTransport}: close it after the event-loop groups.
 */
final class NettyNet implements AutoCloseable {
    final Class<? extends SocketChannel> channelType;
    final Class<? extends ServerChannel> serverType;
    final InetAddress address;
    private final IoHandlerFactory factory;
    private final RdmaTransport rdma;

    private NettyNet(IoHandlerFactory factory, Class<? extends SocketChannel> channelType,
                     Class<? extends ServerChannel> serverType, InetAddress address, RdmaTransport rdma) {
        this.factory = factory;
        this.channelType = channelType;
        this.serverType = serverType;
        this.address = address;
        this.rdma = rdma;
    }

    static NettyNet rdma(RdmaConfig config, ChannelOptions options) throws RdmaException {
        RdmaTransport t = RdmaTransport.open(config, options);
        return new NettyNet(t.ioHandlerFactory(), RdmaSocketChannel.class, RdmaServerSocketChannel.class,
                t.address(), t);
    }

    /** Netty's native epoll transport, servers on {@code address} (the RDMA device's interface). */
    static NettyNet epoll(InetAddress address) {
        return new NettyNet(EpollIoHandler.newFactory(), EpollSocketChannel.class, EpollServerSocketChannel.class,
                address, null);
    }

    static NettyNet of(Side side, Endpoint e) throws Exception {
        return side.rdma ? rdma(e.config(), e.channelOptions()) : epoll(e.address(side));
    }

    MultiThreadIoEventLoopGroup newGroup(int threads) {
        return new MultiThreadIoEventLoopGroup(threads, factory);
    }

    @Override
    public void close() throws RdmaException {
        if (rdma != null) {
            rdma.close();
        }
    }
}

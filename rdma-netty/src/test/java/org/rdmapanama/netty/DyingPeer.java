package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;

import java.net.InetSocketAddress;

/**
 * A Netty client in a JVM of its own, for a test to kill: it connects to {@code host port} on the lab
 * device of {@code transport}, writes "hello", says "connected" on stdout and waits to be killed.
 */
public final class DyingPeer {
    private DyingPeer() {}

    public static void main(String[] args) throws Exception {
        Transport t = Transport.valueOf(args[0]);
        InetSocketAddress at = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults());
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
        Channel ch = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter()).connect(at).sync().channel();
        ch.writeAndFlush(Unpooled.wrappedBuffer("hello".getBytes())).sync();
        System.out.println("connected");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

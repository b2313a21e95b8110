package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;

import java.net.InetSocketAddress;

/**
 * Netty clients in a JVM of their own, for a test to kill: for each {@code transport host port} triple it
 * connects on that transport's lab device and writes "hello", then says "connected" on stdout and waits.
 */
public final class DyingPeer {
    private DyingPeer() {}

    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 2 < args.length; i += 3) {
            RdmaTransport rdma = NettyLab.open(Transport.valueOf(args[i]), ChannelOptions.defaults());
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            new Bootstrap().group(loops).channel(RdmaSocketChannel.class).handler(new ChannelInboundHandlerAdapter())
                    .connect(new InetSocketAddress(args[i + 1], Integer.parseInt(args[i + 2]))).sync().channel()
                    .writeAndFlush(Unpooled.wrappedBuffer("hello".getBytes())).sync();
        }
        System.out.println("connected");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

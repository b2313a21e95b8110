package org.rdmapanama.netty;

import org.rdmapanama.testkit.OnEveryLabTransport;
import org.rdmapanama.testkit.LabPorts;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What Netty code expects of a socket channel's ends: errors as TCP reports them, and the peer's close seen. */
@Tag("device")
class RdmaSocketChannelDeviceTest {
    private static final int SECONDS = 30;

    @OnEveryLabTransport
    void aWriteAfterCloseFailsAndThePeerSeesTheClose(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                CompletableFuture<Void> peerInactive = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                peerInactive.complete(null);
                            }
                        })
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                InetSocketAddress at = (InetSocketAddress) server.localAddress();
                assertNotEquals(0, at.getPort(), "a bind to port 0 reports the port it got");
                Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(server.localAddress()).sync().channel();
                assertTrue(client.isActive());
                assertEquals(at, client.remoteAddress(), "the client's peer is the server");
                assertEquals(rdma.address(), ((InetSocketAddress) client.localAddress()).getAddress(),
                        "the client's address is the device's");
                assertTrue(client.writeAndFlush(Unpooled.wrappedBuffer(new byte[100])).await(SECONDS, TimeUnit.SECONDS));
                client.close().sync();
                assertFalse(client.isActive());
                ChannelFuture late = client.writeAndFlush(Unpooled.wrappedBuffer(new byte[100]));
                assertTrue(late.await(SECONDS, TimeUnit.SECONDS));
                assertInstanceOf(ClosedChannelException.class, late.cause(), "a write after close");
                peerInactive.get(SECONDS, TimeUnit.SECONDS);
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    @OnEveryLabTransport
    void aConnectToAPortNobodyListensOnIsRefused(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            try {
                ChannelFuture f = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(new InetSocketAddress(rdma.address(), LabPorts.next()));
                assertTrue(f.await(SECONDS, TimeUnit.SECONDS), "the connect ends, it does not hang");
                assertInstanceOf(ConnectException.class, f.cause(), "refused as TCP says it");
                assertTrue(f.channel().closeFuture().await(SECONDS, TimeUnit.SECONDS), "the channel is closed");
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    /** As after a FIN: what the peer wrote before it closed is read, even when the reader reads late. */
    @OnEveryLabTransport
    void whatThePeerWroteBeforeClosingIsReadFirst(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                int messages = 20;
                CompletableFuture<Channel> accepted = new CompletableFuture<>();
                java.util.concurrent.atomic.AtomicInteger bytes = new java.util.concurrent.atomic.AtomicInteger();
                CompletableFuture<Integer> inactive = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childOption(io.netty.channel.ChannelOption.AUTO_READ, false)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                accepted.complete(ctx.channel());
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                io.netty.buffer.ByteBuf b = (io.netty.buffer.ByteBuf) msg;
                                bytes.addAndGet(b.readableBytes());
                                b.release();
                                ctx.read();
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                inactive.complete(bytes.get());
                            }
                        })
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(server.localAddress()).sync().channel();
                Channel peer = accepted.get(SECONDS, TimeUnit.SECONDS);
                for (int i = 0; i < messages; i++) {
                    client.write(Unpooled.wrappedBuffer(new byte[10_000])); // each above the eager limit: a message
                }
                client.flush();
                client.close().sync();
                Thread.sleep(2_000); // the peer's close has come by now; nothing was read yet
                assertFalse(inactive.isDone(), "not inactive before what came first was read");
                peer.read();
                assertEquals(messages * 10_000, inactive.get(SECONDS, TimeUnit.SECONDS), "every byte, then inactive");
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }
}

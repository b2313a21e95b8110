package org.rdmapanama.netty.example;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guide's Netty echo service over plain TCP on 127.0.0.1: a server that
 * writes back what it reads, and a client that sends 16 B to 64 KiB and
 * checks every reply. EchoExampleDeviceTest runs this same code over RDMA with
 * its own IoHandler factory and channel classes.
 */
class EchoExampleTest {
    private static final int[] SIZES = {16, 256, 4096, 8176, 8192, 65536};

    /** The whole server side: every read goes back as it came, flushed once per read burst. */
    @ChannelHandler.Sharable
    static final class EchoServerHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg); // the ByteBuf's ownership moves to the write; it is released once written
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** The client's side: TCP is a stream, so replies are gathered until one request's worth came back. */
    static final class EchoClientHandler extends SimpleChannelInboundHandler<ByteBuf> {
        private final ByteArrayOutputStream received = new ByteArrayOutputStream();
        private int expected;
        private CompletableFuture<byte[]> reply;

        /** On the channel's loop, so the fields need no lock. */
        void expect(int bytes, CompletableFuture<byte[]> future) {
            received.reset();
            expected = bytes;
            reply = future;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) throws java.io.IOException {
            msg.readBytes(received, msg.readableBytes());
            if (received.size() >= expected && reply != null) {
                reply.complete(received.toByteArray());
                reply = null;
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (reply != null) {
                reply.completeExceptionally(cause);
            }
            ctx.close();
        }
    }

    @ParameterizedTest
    @EnumSource(TcpTransport.class)
    void echoesEverySize(TcpTransport transport) throws Exception {
        transport.assumeAvailable();
        echoEverySize(transport.newGroup(1), transport.newGroup(2), transport.serverChannelType,
                transport.channelType, new InetSocketAddress("127.0.0.1", 0), transport.name());
    }

    /**
     * The example itself, on whichever transport the groups and channel types are of; shuts the groups down.
     * {@code at} is where the server binds; the client connects to the server's local address.
     */
    static void echoEverySize(EventLoopGroup boss, EventLoopGroup workers, Class<? extends ServerChannel> serverType,
                              Class<? extends SocketChannel> channelType, InetSocketAddress at, String transport)
            throws Exception {
        try {
            Channel server = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(serverType)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new EchoServerHandler())
                    .bind(at).sync().channel();

            EchoClientHandler replies = new EchoClientHandler();
            Channel client = new Bootstrap()
                    .group(workers)
                    .channel(channelType)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(replies);
                        }
                    })
                    .connect(server.localAddress()).sync().channel();

            Random random = new Random(34);
            for (int size : SIZES) {
                byte[] request = new byte[size];
                random.nextBytes(request);
                CompletableFuture<byte[]> reply = new CompletableFuture<>();
                client.eventLoop().submit(() -> replies.expect(size, reply)).sync();
                client.writeAndFlush(Unpooled.wrappedBuffer(request)).sync();
                assertArrayEquals(request, reply.get(10, TimeUnit.SECONDS), size + " bytes on " + transport);
            }
            client.close().sync();
            server.close().sync();
        } finally {
            assertTrue(workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS));
            assertTrue(boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS));
        }
    }
}

package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.SocketChannel;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Half-close as over TCP: the writer's shutdownOutput reaches the reader after every byte it wrote; with
 * ALLOW_HALF_CLOSURE the reader gets ChannelInputShutdownEvent and still answers, and the writer still reads;
 * without it the reader closes, as at a TCP end of stream.
 */
@Tag("device")
class RdmaHalfCloseDeviceTest {
    private static final int SECONDS = 30;
    private static final int MESSAGES = 20, SIZE = 10_000; // each past the eager limit: a rendezvous each

    @OnEveryLabTransport
    void theReaderHearsTheEndAfterEveryByteAndStillAnswers(Transport t) throws Exception {
        run(t, true);
    }

    @OnEveryLabTransport
    void withoutHalfClosureTheReaderCloses(Transport t) throws Exception {
        run(t, false);
    }

    private static void run(Transport t, boolean halfClosure) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                AtomicInteger bytes = new AtomicInteger();
                CompletableFuture<Integer> inputEnded = new CompletableFuture<>();
                CompletableFuture<Integer> serverInactive = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childOption(ChannelOption.ALLOW_HALF_CLOSURE, halfClosure)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                bytes.addAndGet(((ByteBuf) msg).readableBytes());
                                ((ByteBuf) msg).release();
                            }

                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt == ChannelInputShutdownEvent.INSTANCE) {
                                    inputEnded.complete(bytes.get());
                                    assertTrue(((SocketChannel) ctx.channel()).isInputShutdown());
                                    ctx.writeAndFlush(Unpooled.copiedBuffer("got " + bytes.get(), StandardCharsets.US_ASCII))
                                            .addListener(f -> ctx.close());
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                serverInactive.complete(bytes.get());
                            }
                        })
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                CompletableFuture<String> answer = new CompletableFuture<>();
                CompletableFuture<Void> clientInactive = new CompletableFuture<>();
                SocketChannel client = (SocketChannel) new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                answer.complete(((ByteBuf) msg).toString(StandardCharsets.US_ASCII));
                                ((ByteBuf) msg).release();
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                clientInactive.complete(null);
                            }
                        })
                        .connect(server.localAddress()).sync().channel();
                for (int i = 0; i < MESSAGES; i++) {
                    client.write(Unpooled.wrappedBuffer(new byte[SIZE]));
                }
                client.flush();
                assertTrue(client.shutdownOutput().await(SECONDS, TimeUnit.SECONDS));
                assertTrue(client.isOutputShutdown() && !client.isInputShutdown() && client.isActive());
                ChannelFuture late = client.writeAndFlush(Unpooled.wrappedBuffer(new byte[10]));
                assertTrue(late.await(SECONDS, TimeUnit.SECONDS));
                assertInstanceOf(ClosedChannelException.class, late.cause(), "a write after shutdownOutput");
                if (halfClosure) {
                    assertEquals(MESSAGES * SIZE, inputEnded.get(SECONDS, TimeUnit.SECONDS), "the end after every byte");
                    assertEquals("got " + MESSAGES * SIZE, answer.get(SECONDS, TimeUnit.SECONDS),
                            "the half-closed side still reads");
                } else {
                    assertEquals(MESSAGES * SIZE, serverInactive.get(SECONDS, TimeUnit.SECONDS),
                            "closed after every byte");
                    assertFalse(inputEnded.isDone(), "no input-shutdown event without ALLOW_HALF_CLOSURE");
                }
                clientInactive.get(SECONDS, TimeUnit.SECONDS);
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }
}

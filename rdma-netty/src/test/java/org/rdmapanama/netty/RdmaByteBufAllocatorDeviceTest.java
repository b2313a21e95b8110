package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport's allocator: buffers a handler allocates are sent where they lie, whatever their shape
 * (moved reader index, grown, past the largest message, shared), the bytes arrive as written, and every
 * registered buffer goes back to the pool.
 */
@Tag("device")
class RdmaByteBufAllocatorDeviceTest {
    private static final int SECONDS = 60;
    private static final int MAX_MESSAGE = 256 << 10;

    @OnEveryLabTransport
    void allocatedBuffersArriveAsWrittenAndGoBackToThePool(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults().withMaxMessageSize(MAX_MESSAGE))) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                CompletableFuture<ByteBufAllocator> childAlloc = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                childAlloc.complete(ctx.alloc());
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ctx.write(msg); // a received view: copied when written back
                            }

                            @Override
                            public void channelReadComplete(ChannelHandlerContext ctx) {
                                ctx.flush();
                            }
                        })
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                CrcSink echoed = new CrcSink(SECONDS);
                Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class).handler(echoed)
                        .connect(server.localAddress()).sync().channel();
                ByteBufAllocator alloc = client.alloc();
                assertSame(rdma.allocator(), alloc, "a client's default allocator is the transport's");
                assertSame(rdma.allocator(), childAlloc.get(SECONDS, TimeUnit.SECONDS), "an accepted child's too");

                CRC32 sent = new CRC32();
                long sentBytes = 0;
                // Alone in its flush: sent as it is.
                sentBytes += write(client, filled(alloc.buffer(), 100, 1, sent), true);
                // Three small ones in one flush: one message, copied.
                for (int i = 0; i < 3; i++) {
                    sentBytes += write(client, filled(alloc.buffer(), 50, 10 + i, sent), false);
                }
                client.flush();
                // Past the eager limit: rendezvous from the buffer itself.
                sentBytes += write(client, filled(alloc.directBuffer(20_000), 20_000, 2, sent), true);
                // A reader index moved: the readable bytes go, not the skipped ones.
                ByteBuf skipped = alloc.buffer(1000);
                for (int i = 0; i < 300; i++) {
                    skipped.writeByte(0x55);
                }
                filled(skipped, 700, 3, sent).skipBytes(300);
                sentBytes += write(client, skipped, true);
                // Grown from 64 B into a larger registered buffer.
                sentBytes += write(client, filled(alloc.buffer(64), 50_000, 4, sent), true);
                // Grown past the largest message: plain memory, copied and cut.
                sentBytes += write(client, filled(alloc.buffer(64), MAX_MESSAGE + 44_000, 5, sent), true);
                // Registered but past the largest message (the pool's size classes are powers of two): copied and cut.
                sentBytes += write(client, filled(alloc.buffer(MAX_MESSAGE - 10), MAX_MESSAGE + 30_000, 8, sent), true);
                // Shared with the writer, who reads it after the send: copied, so the writer's view keeps its bytes.
                ByteBuf kept = filled(alloc.buffer(), 4000, 6, sent);
                sentBytes += write(client, kept.retainedDuplicate(), true);
                for (int i = 0; i < 20; i++) { // traffic that would reuse the buffer had it been sent
                    sentBytes += write(client, filled(alloc.buffer(), 4000, 7 + i, sent), true);
                }
                CRC32 again = new CRC32();
                again.update(kept.nioBuffer());
                assertEquals(crcOf(4000, 6), again.getValue(), "the writer's retained buffer still holds its bytes");
                kept.release();

                echoed.await(sentBytes);
                assertEquals(sent.getValue(), echoed.crc.getValue(), "the echoed stream is the written one");

                // Many buffers sent in place: each goes back, so the pool does not grow with their number.
                long before = rdma.group().registeredBytes();
                int n = 2000, size = 4000;
                CRC32 loopSent = new CRC32();
                echoed.reset();
                for (int i = 0; i < n; i++) {
                    ByteBuf b = filled(alloc.buffer(size), size, i, loopSent);
                    if (i % 16 == 15) {
                        client.writeAndFlush(b).sync();
                    } else {
                        client.write(b);
                    }
                }
                client.flush();
                echoed.await((long) n * size);
                assertEquals(loopSent.getValue(), echoed.crc.getValue(), "the echoed stream is the written one");
                long grown = rdma.group().registeredBytes() - before;
                assertTrue(grown <= 4L << 20, "the pool grew by " + grown + " bytes for " + n + " buffers of "
                        + size + " bytes (" + (long) n * size + " if none went back)");

                client.close().sync();
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    /** A buffer allocated, written and released again and again is the same view: no garbage per buffer. */
    @OnEveryLabTransport
    void aReleasedBufferIsReusedWithoutAllocating(Transport t) throws Exception {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        io.netty.util.ResourceLeakDetector.Level level = io.netty.util.ResourceLeakDetector.getLevel();
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED); // its samples allocate
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            ByteBufAllocator alloc = rdma.allocator();
            ByteBuf first = alloc.buffer(1000);
            first.release();
            for (int i = 0; i < 20_000; i++) { // the JIT's warm-up
                cycle(alloc, i);
            }
            int n = 50_000;
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                cycle(alloc, i);
            }
            long bytes = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(bytes < n / 10, bytes + " bytes allocated for " + n + " buffers");
            ByteBuf again = alloc.buffer(1000);
            assertSame(first, again, "the buffer's view, used again");
            again.release();
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(level);
        }
    }

    private static void cycle(ByteBufAllocator alloc, int i) {
        ByteBuf b = alloc.buffer(1000);
        b.writeLong(i).writeInt(i);
        if (b.readLong() != i) {
            throw new AssertionError("read back");
        }
        b.release();
    }

    @OnEveryLabTransport
    void anAllocatorTheApplicationSetsIsKept(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            try {
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(new ChannelInboundHandlerAdapter())
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .option(ChannelOption.ALLOCATOR, UnpooledByteBufAllocator.DEFAULT)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(server.localAddress()).sync().channel();
                assertSame(UnpooledByteBufAllocator.DEFAULT, client.alloc(), "the application's choice");
                assertInstanceOf(RdmaByteBufAllocator.class, rdma.allocator());
                client.close().sync();
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    private static long write(Channel ch, ByteBuf b, boolean flush) {
        int n = b.readableBytes();
        if (flush) {
            ch.writeAndFlush(b);
        } else {
            ch.write(b);
        }
        return n;
    }

    /** Appends {@code n} bytes of pattern {@code seed} to {@code b} and to {@code crc}. */
    private static ByteBuf filled(ByteBuf b, int n, int seed, CRC32 crc) {
        for (int i = 0; i < n; i++) {
            byte v = (byte) (seed * 31 + i * 7);
            b.writeByte(v);
            crc.update(v);
        }
        return b;
    }

    private static long crcOf(int n, int seed) {
        CRC32 c = new CRC32();
        filled(UnpooledByteBufAllocator.DEFAULT.heapBuffer(n), n, seed, c).release();
        return c.getValue();
    }
}

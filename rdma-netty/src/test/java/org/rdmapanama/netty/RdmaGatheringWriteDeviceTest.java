package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Gathering writes: a composite's large components of the transport's allocator go as messages of their
 * own without a copy, the bytes between them are copied, and the peer reads the composite's bytes in order.
 * The peer's reads count the messages (one read each); the writer's count of copied bytes tells a copy.
 */
@Tag("device")
class RdmaGatheringWriteDeviceTest {
    private static final int SECONDS = 60;
    private static final int MAX_MESSAGE = 256 << 10;

    @OnEveryLabTransport
    void registeredComponentsGoWithoutACopyAndSharedOnesAreCopied(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults().withMaxMessageSize(MAX_MESSAGE))) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                CrcSink sink = new CrcSink(SECONDS);
                Channel client = connect(rdma, loops, sink);
                ByteBufAllocator alloc = client.alloc();
                int large = rdma.options().eagerLimit() + 100;

                // Registered, unshared, large: a reader index moved, a whole buffer, a slice carrying its
                // buffer's only reference, one just past the eager limit. Heap bytes between them.
                ByteBuf moved = filled(alloc.directBuffer(20_300), 20_300, 1).skipBytes(300);
                ByteBuf sliced = filled(alloc.directBuffer(20_000), 20_000, 2);
                CompositeByteBuf c = alloc.compositeBuffer(64)
                        .addComponent(true, filled(Unpooled.buffer(100), 100, 3))
                        .addComponent(true, moved)
                        .addComponent(true, filled(Unpooled.buffer(60), 60, 4))
                        .addComponent(true, filled(alloc.directBuffer(30_000), 30_000, 5))
                        .addComponent(true, sliced.slice(2_000, 15_000))
                        .addComponent(true, filled(alloc.directBuffer(large), large, 6))
                        .addComponent(true, filled(Unpooled.buffer(10), 10, 7));
                Expect e = expect(c);
                long copiedBefore = copied(client);
                sink.reset();
                client.writeAndFlush(c).sync();
                sink.await(e.bytes);
                assertEquals(e.crc, sink.crc.getValue(), "the peer read the composite's bytes in order");
                assertEquals(170, copied(client) - copiedBefore, "only the heap bytes were copied");
                // 100 | moved | 60 | 30,000 | slice | large | 10: no run of heap bytes between the last three.
                assertEquals(7, sink.reads, "each registered component is a message of its own");

                // A component the writer still holds (a retained duplicate): copied, and the writer's buffer
                // keeps its bytes while traffic reuses the pool's buffers.
                ByteBuf kept = filled(alloc.directBuffer(20_000), 20_000, 8);
                long keptCrc = crc(kept, 0, 20_000);
                CompositeByteBuf withShared = alloc.compositeBuffer(64)
                        .addComponent(true, filled(Unpooled.buffer(50), 50, 9))
                        .addComponent(true, kept.retainedDuplicate())
                        .addComponent(true, filled(Unpooled.buffer(50), 50, 10));
                // A composite the writer still holds: every component copied, and it stays readable.
                CompositeByteBuf held = alloc.compositeBuffer(64)
                        .addComponent(true, filled(alloc.directBuffer(20_000), 20_000, 11))
                        .addComponent(true, filled(Unpooled.buffer(10), 10, 12));
                long heldCrc = crc(held, 0, held.writerIndex());
                held.retain();
                Expect shared = expect(withShared, held);
                copiedBefore = copied(client);
                sink.reset();
                client.write(withShared);
                client.writeAndFlush(held).sync();
                sink.await(shared.bytes);
                assertEquals(shared.crc, sink.crc.getValue(), "the peer read both composites in order");
                assertEquals(20_100 + 20_010, copied(client) - copiedBefore, "shared bytes are copied");
                assertEquals(2, sink.reads, "each composite copied into one message");

                sink.reset();
                long traffic = 0;
                for (int i = 0; i < 20; i++) { // sent where they lie, so that the pool hands their buffers on
                    traffic += 20_000;
                    client.writeAndFlush(filled(alloc.directBuffer(20_000), 20_000, 20 + i));
                }
                sink.await(traffic);
                assertEquals(keptCrc, crc(kept, 0, 20_000), "the writer's buffer still holds its bytes");
                assertEquals(heldCrc, crc(held, 0, held.writerIndex()), "the writer's composite too");
                assertTrue(kept.release());
                assertTrue(held.release());

                client.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    /**
     * A composite larger than the largest message, sent two messages at a time (the send queue's limit):
     * it goes in parts as the channel turns writable again, and a cancelled one before it releases its
     * buffers and sends nothing.
     */
    @OnEveryLabTransport
    void aCompositeLargerThanAMessageGoesInPartsAndACancelledOneNotAtAll(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults().withMaxMessageSize(MAX_MESSAGE).withSendQueueLimit(4);
        try (RdmaTransport rdma = NettyLab.open(t, o)) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            try {
                CrcSink sink = new CrcSink(SECONDS);
                Channel client = connect(rdma, loops, sink);
                ByteBufAllocator alloc = client.alloc();

                ByteBuf cancelledPart = filled(alloc.directBuffer(20_000), 20_000, 1);
                CompositeByteBuf cancelled = alloc.compositeBuffer(64).addComponent(true, cancelledPart);
                // heap 30 | reg | heap 31 | reg | heap past the largest message | reg | heap 33 | reg | heap 34 | reg
                CompositeByteBuf c = alloc.compositeBuffer(64);
                int heapBytes = 0;
                for (int i = 0; i < 5; i++) {
                    int h = i == 2 ? MAX_MESSAGE + 44_000 : 30 + i;
                    heapBytes += h;
                    c.addComponent(true, filled(Unpooled.buffer(h), h, 10 + i));
                    int r = 9_000 + i * 1_000;
                    c.addComponent(true, filled(alloc.directBuffer(r), r, 20 + i));
                }
                Expect e = expect(c);
                long copiedBefore = copied(client);
                sink.reset();
                client.eventLoop().submit(() -> {
                    ChannelPromise p = client.newPromise();
                    client.write(cancelled, p);
                    p.cancel(false);
                    client.writeAndFlush(c);
                }).sync();
                sink.await(e.bytes);
                assertEquals(e.crc, sink.crc.getValue(), "the peer read the composite's bytes in order");
                assertEquals(0, cancelled.refCnt(), "the cancelled composite was released");
                assertEquals(0, cancelledPart.refCnt(), "and its component");
                assertEquals(heapBytes, copied(client) - copiedBefore, "only the heap bytes were copied");
                // Five registered components, four small runs, and the large run cut in two.
                assertEquals(11, sink.reads, "each registered component is a message of its own");
                client.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    private static Channel connect(RdmaTransport rdma, EventLoopGroup loops, CrcSink sink) throws InterruptedException {
        Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                .childHandler(sink)
                .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
        Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(server.localAddress()).sync().channel();
        client.closeFuture().addListener(f -> server.close());
        return client;
    }

    /** Bytes copied by the client's write path so far, read on its event loop. */
    private static long copied(Channel client) throws Exception {
        return client.eventLoop().submit(() -> {
            Writes w = ((RdmaSocketChannel) client).writes;
            return w == null ? 0L : w.copied();
        }).get(SECONDS, TimeUnit.SECONDS);
    }

    private record Expect(long bytes, long crc) {}

    /** The readable bytes of {@code bufs}, in order, as the peer should read them. */
    private static Expect expect(ByteBuf... bufs) {
        CRC32 crc = new CRC32();
        long n = 0;
        for (ByteBuf b : bufs) {
            crc.update(b.nioBuffer());
            n += b.readableBytes();
        }
        return new Expect(n, crc.getValue());
    }

    private static long crc(ByteBuf b, int index, int length) {
        CRC32 crc = new CRC32();
        crc.update(b.nioBuffer(index, length));
        return crc.getValue();
    }

    /** Appends {@code n} bytes of pattern {@code seed}. */
    private static ByteBuf filled(ByteBuf b, int n, int seed) {
        for (int i = 0; i < n; i++) {
            b.writeByte(seed * 31 + i * 7);
        }
        return b;
    }
}

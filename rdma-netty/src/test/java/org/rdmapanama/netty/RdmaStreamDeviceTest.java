package org.rdmapanama.netty;

import org.rdmapanama.testkit.OnEveryLabTransport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A byte stream across message boundaries: small writes coalesced, a flush
 * larger than the send queue (the writability path), and a reader that keeps
 * every read until the end, which would stop a sender for good if views held
 * its credits.
 */
@Tag("device")
class RdmaStreamDeviceTest {
    private static final int SECONDS = 60;

    static byte pattern(long i) {
        return (byte) (i * 31 + 7);
    }

    /** Checks the stream's bytes in order as they come; optionally keeps every read until all came. */
    static final class Sink extends ChannelInboundHandlerAdapter {
        final CompletableFuture<Long> done = new CompletableFuture<>();
        private final long expected;
        private final boolean hold;
        private final List<ByteBuf> held = new ArrayList<>();
        private long position;
        int reads;

        Sink(long expected, boolean hold) {
            this.expected = expected;
            this.hold = hold;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            reads++;
            for (int i = b.readerIndex(); i < b.writerIndex(); i++, position++) {
                if (b.getByte(i) != pattern(position)) {
                    done.completeExceptionally(new AssertionError("byte " + position + " is wrong"));
                }
            }
            if (hold) {
                held.add(b);
            } else {
                b.release();
            }
            if (position >= expected) {
                held.forEach(ByteBuf::release);
                held.clear();
                done.complete(position);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
        }
    }

    /** Sends {@code total} pattern bytes in writes of {@code size}, flushing every {@code perFlush}; the sink's reads. */
    private static int stream(Transport t, long total, int size, int perFlush, boolean hold) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                Sink sink = new Sink(total, hold);
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(sink).bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                Channel client = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(server.localAddress()).sync().channel();
                long pos = 0;
                for (int n = 1; pos < total; n++) {
                    byte[] b = new byte[(int) Math.min(size, total - pos)];
                    for (int i = 0; i < b.length; i++) {
                        b[i] = pattern(pos++);
                    }
                    if (n % perFlush == 0 || pos == total) {
                        client.writeAndFlush(Unpooled.wrappedBuffer(b));
                    } else {
                        client.write(Unpooled.wrappedBuffer(b));
                    }
                }
                assertEquals(total, sink.done.get(SECONDS, TimeUnit.SECONDS), "every byte came, in order");
                client.close().sync();
                server.close().sync();
                return sink.reads;
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    @OnEveryLabTransport
    void smallWritesShareMessages(Transport t) throws Exception {
        int reads = stream(t, 2000 * 7, 7, 100, false);
        assertTrue(reads <= 40, "100 writes of 7 B flushed together go as one message or two, not 100: " + reads + " reads");
    }

    @OnEveryLabTransport
    void aFlushLargerThanTheSendQueueGoesOnceWritable(Transport t) throws Exception {
        // 64 messages of 64 KiB, flushed at once: twice the send queue the transport allows.
        stream(t, 4L << 20, 64 << 10, 64, false);
    }

    @OnEveryLabTransport
    void aReaderKeepingEveryReadStillGetsTheWholeStream(Transport t) throws Exception {
        // 200 eager messages against a 32-message window: past MAX_HELD_VIEWS the reads are copies.
        stream(t, 200 * 4096, 4096, 1, true);
    }
}

package org.rdmapanama.channel;

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
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.netty.NettyLab;
import org.rdmapanama.netty.RdmaServerSocketChannel;
import org.rdmapanama.netty.RdmaSocketChannel;
import org.rdmapanama.netty.RdmaTransport;
import org.rdmapanama.testkit.OnEveryLabTransport;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.SendRequest;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The channel layer's malformed messages ({@link ChannelMalformedPeerDeviceTest}'s cases, from a raw-verbs
 * peer) sent to a Netty server: the child they came on sees exceptionCaught with the protocol error, then
 * channelInactive; the raw peer is disconnected; a well-behaved Netty client of the same server goes on.
 * In this package for the wire format's package-private helpers.
 */
@Tag("device")
class NettyMalformedPeerDeviceTest {
    private static final int SECONDS = 30;

    /** One for every child (so @Sharable): echoes, and records what the children hear. */
    @io.netty.channel.ChannelHandler.Sharable
    private static final class ChildRecorder extends ChannelInboundHandlerAdapter {
        private final BlockingQueue<Throwable> caught;
        private final BlockingQueue<Boolean> inactive;

        ChildRecorder(BlockingQueue<Throwable> caught, BlockingQueue<Boolean> inactive) {
            this.caught = caught;
            this.inactive = inactive;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg); // echo
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            caught.add(cause);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            inactive.add(true);
        }
    }

    @OnEveryLabTransport
    void aMalformedMessageClosesOnlyItsChild(Transport t) throws Exception {
        ChannelOptions o = ChannelOptions.defaults();
        try (RdmaTransport rdma = NettyLab.open(t, o)) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory());
            try {
                BlockingQueue<Throwable> caught = new LinkedBlockingQueue<>();
                BlockingQueue<Boolean> inactive = new LinkedBlockingQueue<>();
                Channel server = new ServerBootstrap().group(loops).channel(RdmaServerSocketChannel.class)
                        .childHandler(new ChildRecorder(caught, inactive))
                        .bind(new InetSocketAddress(rdma.address(), 0)).sync().channel();
                InetSocketAddress at = (InetSocketAddress) server.localAddress();
                BlockingQueue<String> replies = new LinkedBlockingQueue<>();
                Channel good = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .handler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ByteBuf b = (ByteBuf) msg;
                                replies.add(b.toString(StandardCharsets.US_ASCII));
                                b.release();
                            }
                        })
                        .connect(at).sync().channel();
                for (ChannelMalformedPeerDeviceTest.Case c : ChannelMalformedPeerDeviceTest.cases(o)) {
                    try (RdmaConnection raw = RdmaConnection.resolve(at, new InetSocketAddress(rdma.address(), 0),
                            ConnectionOptions.defaults(), ChannelMalformedPeerDeviceTest.T);
                         SendRequest wr = raw.queuePair().newSendRequest(1, 1);
                         CompletionBatch done = new CompletionBatch(4)) {
                        MemoryRegion mr = raw.protectionDomain().allocate(4096);
                        c.write().accept(mr.segment());
                        raw.connect(Wire.privateData(o.window() + 1, o.slotSize(), o.maxMessageSize()),
                                ChannelMalformedPeerDeviceTest.T);
                        raw.queuePair().postSend(wr.sge(mr, 0, c.bytes()).signaled(0, true));
                        assertEquals(1, raw.completionQueue().pollUntil(done, ChannelMalformedPeerDeviceTest.T));
                        Throwable cause = caught.poll(SECONDS, TimeUnit.SECONDS);
                        assertNotNull(cause, c.name() + ": no exceptionCaught");
                        assertTrue(cause instanceof ProtocolException && cause.getMessage().contains(c.expected()),
                                c.name() + ": " + cause);
                        assertNotNull(inactive.poll(SECONDS, TimeUnit.SECONDS), c.name() + ": no channelInactive");
                        assertTrue(raw.awaitDisconnect(ChannelMalformedPeerDeviceTest.T),
                                c.name() + ": the raw peer was disconnected");
                    }
                    good.writeAndFlush(Unpooled.copiedBuffer(c.name(), StandardCharsets.US_ASCII));
                    assertEquals(c.name(), replies.poll(SECONDS, TimeUnit.SECONDS),
                            "the good client goes on after " + c.name());
                }
                good.close().sync();
                server.close().sync();
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(SECONDS, TimeUnit.SECONDS));
            }
        }
    }
}

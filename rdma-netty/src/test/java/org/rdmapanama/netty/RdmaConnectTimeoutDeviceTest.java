package org.rdmapanama.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.testkit.LabPorts;
import org.rdmapanama.testkit.OnEveryLabTransport;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A connect to an address on the device's subnet that nobody has: Netty's ConnectTimeoutException, in time. */
@Tag("device")
class RdmaConnectTimeoutDeviceTest {
    @OnEveryLabTransport
    void aConnectNobodyAnswersTimesOutAsTcpDoes(Transport t) throws Exception {
        // siw's rdma_connect is a blocking TCP connect in the kernel: to a silent address it holds the rdma_cm
        // thread, and a close of the id, until TCP gives up (about 127 s); see docs/limitations.md.
        org.junit.jupiter.api.Assumptions.assumeTrue(t == Transport.ROCE_V2, "siw connects in the kernel, blocking");
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory());
            try {
                byte[] a = rdma.address().getAddress();
                a[a.length - 1] = (byte) (a[a.length - 1] == (byte) 253 ? 252 : 253); // no host there in the lab
                long start = System.nanoTime();
                ChannelFuture f = new Bootstrap().group(loops).channel(RdmaSocketChannel.class)
                        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 1000)
                        .handler(new ChannelInboundHandlerAdapter())
                        .connect(new InetSocketAddress(InetAddress.getByAddress(a), LabPorts.next()));
                assertTrue(f.await(30, TimeUnit.SECONDS), "the connect ends, it does not hang");
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertInstanceOf(ConnectTimeoutException.class, f.cause(), "after " + ms + " ms: " + f.cause());
                assertTrue(ms < 10_000, "timed out after " + ms + " ms, asked for 1,000");
                assertTrue(f.channel().closeFuture().await(30, TimeUnit.SECONDS), "the channel is closed");
            } finally {
                assertTrue(loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(30, TimeUnit.SECONDS));
            }
        }
    }
}

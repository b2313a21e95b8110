package org.rdmapanama.netty.example;

import org.rdmapanama.testkit.OnEveryLabTransport;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.netty.NettyLab;
import org.rdmapanama.netty.RdmaServerSocketChannel;
import org.rdmapanama.netty.RdmaSocketChannel;
import org.rdmapanama.netty.RdmaTransport;

import java.net.InetSocketAddress;

/**
 * The gRPC example of {@link GrpcExampleTest} over RDMA: grpc-netty unchanged,
 * given event-loop groups of this transport and its channel classes.
 */
@Tag("device")
class GrpcExampleDeviceTest {
    @OnEveryLabTransport
    void unaryAndServerStreaming(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            GrpcExampleTest.unaryAndServerStreaming(
                    new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory()),
                    new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory()),
                    new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory()),
                    RdmaServerSocketChannel.class, RdmaSocketChannel.class,
                    new InetSocketAddress(rdma.address(), 0));
        }
    }
}

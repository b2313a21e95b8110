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
 * The echo example of {@link EchoExampleTest} over RDMA: the same server and
 * client code, with only the event loops' IoHandler factory and the channel
 * classes changed, on every transport the lab has.
 */
@Tag("device")
class EchoExampleDeviceTest {
    @OnEveryLabTransport
    void echoesEverySize(Transport t) throws Exception {
        try (RdmaTransport rdma = NettyLab.open(t, ChannelOptions.defaults())) {
            EchoExampleTest.echoEverySize(
                    new MultiThreadIoEventLoopGroup(1, rdma.ioHandlerFactory()),
                    new MultiThreadIoEventLoopGroup(2, rdma.ioHandlerFactory()),
                    RdmaServerSocketChannel.class, RdmaSocketChannel.class,
                    new InetSocketAddress(rdma.address(), 0), t.name());
        }
    }
}

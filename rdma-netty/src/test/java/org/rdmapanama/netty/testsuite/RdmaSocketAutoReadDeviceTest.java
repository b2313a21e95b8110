package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketAutoReadTest;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link SocketAutoReadTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketAutoReadDeviceTest extends SocketAutoReadTest {
    private final Transport transport;

    RdmaSocketAutoReadDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    @Override
    protected List<ByteBufAllocator> newAllocators() {
        return RdmaSocketTestPermutation.allocators();
    }

    @Override
    protected SocketAddress newSocketAddress() {
        return RdmaSocketTestPermutation.address(transport);
    }
}

package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.WriteBeforeRegisteredTest;
import org.junit.jupiter.api.Tag;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link WriteBeforeRegisteredTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaWriteBeforeRegisteredDeviceTest extends WriteBeforeRegisteredTest {
    private final Transport transport;

    RdmaWriteBeforeRegisteredDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.clientSocket(transport);
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

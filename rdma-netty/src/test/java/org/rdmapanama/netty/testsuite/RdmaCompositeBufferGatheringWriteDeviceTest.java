package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.CompositeBufferGatheringWriteTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link CompositeBufferGatheringWriteTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaCompositeBufferGatheringWriteDeviceTest extends CompositeBufferGatheringWriteTest {
    private final Transport transport;

    RdmaCompositeBufferGatheringWriteDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    @Override
    @Test
    @Disabled("slow under the lab's emulation: past its 10 s timeout on rxe0 (41 s), within it on siw0")
    public void testCompositeBufferPartialWriteDoesNotCorruptData(TestInfo testInfo) {
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

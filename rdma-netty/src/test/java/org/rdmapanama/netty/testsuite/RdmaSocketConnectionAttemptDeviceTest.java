package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.SocketConnectionAttemptTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Netty's {@link SocketConnectionAttemptTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketConnectionAttemptDeviceTest extends SocketConnectionAttemptTest {
    private final Transport transport;

    RdmaSocketConnectionAttemptDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapFactory<Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.clientSocket(transport);
    }

    @Override
    @Test
    public void testConnectCancellation(TestInfo testInfo) throws Throwable {
        // The suite needs a connect to its bad host that neither opens nor fails within a second.
        assumeTrue(transport != Transport.IWARP, "siw's connect fails at once with ENETUNREACH in the lab, "
                + "where a TCP connect to the same bad host hangs: nothing left to cancel");
        super.testConnectCancellation(testInfo);
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

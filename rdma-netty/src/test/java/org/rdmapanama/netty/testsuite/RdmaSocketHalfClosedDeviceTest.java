package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketHalfClosedTest;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.List;

/** Netty's {@link SocketHalfClosedTest} on RDMA. */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketHalfClosedDeviceTest extends SocketHalfClosedTest {
    private final Transport transport;

    RdmaSocketHalfClosedDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    @Override
    @Test
    @Disabled("fails on rxe0 and siw0 (2026-12-08, \"leader premature close\"): the follower closes with SO_LINGER 0 right after its reply, and an abortive close here flushes the sends the device has not carried yet, where a TCP kernel has usually sent them")
    public void testAutoCloseFalseDoesShutdownOutput(TestInfo testInfo) {
    }

    @Override
    @Test
    @Disabled("fails on rxe0 and siw0 (2026-12-08, no ChannelInputShutdownEvent where one is expected with auto-read on): not diagnosed yet")
    public void testHalfClosureOnlyOneEventWhenAutoRead(TestInfo testInfo) {
    }

    @Override
    @Test
    @Disabled("times out on rxe0 and siw0 (2026-12-08, 20 s): not diagnosed yet")
    public void testAllDataReadClosure(TestInfo testInfo) {
    }

    @Override
    @Test
    @Disabled("times out on rxe0 and siw0 (2026-12-08, 20 s): not diagnosed yet")
    public void testAllDataReadEventTriggeredAfterHalfClosure(TestInfo testInfo) {
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

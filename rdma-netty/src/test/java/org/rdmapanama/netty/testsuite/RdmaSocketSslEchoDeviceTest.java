package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.socket.SocketSslEchoTest;
import io.netty.handler.ssl.SslContext;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdmapanama.device.Transport;

import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Netty's {@link SocketSslEchoTest} on RDMA: TLS over the transport. Netty's
 * 96 parameter sets (JDK provider; OpenSSL is not on the class path) each echo
 * 1 MiB through TLS, far too long under the lab's emulation (5 to 16 s each);
 * three are run: plain, no auto-read with the delegated-task executors,
 * chunked writes and composite buffers, and a renegotiation by the client.
 */
@Tag("device")
@RunsOnEveryLabTransport
class RdmaSocketSslEchoDeviceTest extends SocketSslEchoTest {
    private final Transport transport;

    RdmaSocketSslEchoDeviceTest(Transport transport) {
        this.transport = transport;
    }

    @Override
    protected List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> newFactories() {
        return RdmaSocketTestPermutation.socket(transport);
    }

    /** Indices into Netty's {@code data()}: 32 flag combinations per renegotiation type, NONE first. */
    private static final int[] PICKED = {4, 27, 32 + 4};

    static Stream<Arguments> rdmaData() throws Exception {
        List<Object[]> all = new ArrayList<>(data());
        return Arrays.stream(PICKED).mapToObj(i -> Arguments.of(all.get(i)));
    }

    @Override
    @ParameterizedTest(name = "{index}: renegotiation = {2}, serverUsesDelegatedTaskExecutor = {3}, "
            + "clientUsesDelegatedTaskExecutor = {4}, autoRead = {5}, useChunkedWriteHandler = {6}, "
            + "useCompositeByteBuf = {7}")
    @MethodSource("rdmaData")
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    public void testSslEcho(SslContext serverCtx, SslContext clientCtx, Renegotiation renegotiation,
            boolean serverUsesDelegatedTaskExecutor, boolean clientUsesDelegatedTaskExecutor,
            boolean autoRead, boolean useChunkedWriteHandler, boolean useCompositeByteBuf,
            TestInfo testInfo) throws Throwable {
        super.testSslEcho(serverCtx, clientCtx, renegotiation, serverUsesDelegatedTaskExecutor,
                clientUsesDelegatedTaskExecutor, autoRead, useChunkedWriteHandler, useCompositeByteBuf, testInfo);
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

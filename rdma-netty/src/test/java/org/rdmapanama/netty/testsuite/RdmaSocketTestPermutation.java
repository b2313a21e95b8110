package org.rdmapanama.netty.testsuite;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.testsuite.transport.socket.SocketTestPermutation;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.netty.NettyLab;
import org.rdmapanama.netty.RdmaServerSocketChannel;
import org.rdmapanama.netty.RdmaSocketChannel;
import org.rdmapanama.netty.RdmaTransport;

import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Netty's socket test permutations on one lab transport, as epoll's
 * {@code EpollSocketTestPermutation} gives them on epoll: an RDMA server and
 * an RDMA client (an RDMA end cannot talk to a TCP one, so there are no mixed
 * combinations). One transport and one event-loop group per lab transport
 * serve every suite class in the JVM, as Netty's own permutation shares its
 * groups; they are closed once the test run ends ({@link Cleanup}).
 */
final class RdmaSocketTestPermutation extends SocketTestPermutation {
    /** Two vCPUs in the lab: more loops would only take turns polling. */
    private static final int LOOPS = 2;
    private static final Map<Transport, RdmaSocketTestPermutation> OPEN = new EnumMap<>(Transport.class);

    private final RdmaTransport rdma;
    private final EventLoopGroup group;

    private RdmaSocketTestPermutation(RdmaTransport rdma, Transport t) {
        this.rdma = rdma;
        group = new MultiThreadIoEventLoopGroup(LOOPS, new DefaultThreadFactory("testsuite-" + t, true),
                rdma.ioHandlerFactory());
    }

    /** The permutation on the device selection picks for {@code t}; skips the test where there is none. */
    static synchronized RdmaSocketTestPermutation on(Transport t) {
        RdmaSocketTestPermutation p = OPEN.get(t);
        if (p == null) {
            try {
                p = new RdmaSocketTestPermutation(NettyLab.open(t, ChannelOptions.defaults()), t);
            } catch (RdmaException e) {
                throw new UncheckedIOException(e);
            }
            OPEN.put(t, p);
        }
        return p;
    }

    /**
     * The default allocator only, where Netty's suite runs each test with two (pooled and adaptive): the
     * transport copies every write into its registered buffers and reads views of them, so the allocator
     * changes little here, and each run costs the lab's emulated devices seconds.
     */
    static List<ByteBufAllocator> allocators() {
        return List.of(ByteBufAllocator.DEFAULT);
    }

    /** An RDMA server and client on {@code t}, for an {@code AbstractSocketTest}'s {@code newFactories()}. */
    static List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socket(Transport t) {
        return on(t).socket();
    }

    /** An RDMA client on {@code t}, for an {@code AbstractClientSocketTest}'s {@code newFactories()}. */
    static List<BootstrapFactory<Bootstrap>> clientSocket(Transport t) {
        return on(t).clientSocket();
    }

    /** Port 0 on the device's address: the suite's default, localhost, is no RDMA device's. */
    static SocketAddress address(Transport t) {
        return new InetSocketAddress(on(t).rdma.address(), 0);
    }

    /** The device's address, where a test needs one (a refused connect, say). */
    static InetAddress deviceAddress(Transport t) {
        return on(t).rdma.address();
    }

    @Override
    public List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socket() {
        return combo(serverSocket(), clientSocket());
    }

    @Override
    public List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socketWithFastOpen() {
        return socket();
    }

    @Override
    public List<BootstrapFactory<ServerBootstrap>> serverSocket() {
        return List.of(() -> new ServerBootstrap().group(group).channel(RdmaServerSocketChannel.class));
    }

    @Override
    public List<BootstrapFactory<Bootstrap>> clientSocket() {
        return List.of(() -> new Bootstrap().group(group).channel(RdmaSocketChannel.class));
    }

    private void close() throws Exception {
        try {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(30, TimeUnit.SECONDS);
        } finally {
            rdma.close();
        }
    }

    /** Closes every permutation's group, then its transport, when the test run ends. */
    static final class Cleanup implements BeforeAllCallback {
        @Override
        public void beforeAll(ExtensionContext context) {
            context.getRoot().getStore(ExtensionContext.Namespace.create(Cleanup.class))
                    .getOrComputeIfAbsent(Cleanup.class, k -> (AutoCloseable) Cleanup::closeAll);
        }

        private static void closeAll() throws Exception {
            synchronized (RdmaSocketTestPermutation.class) {
                for (RdmaSocketTestPermutation p : OPEN.values()) {
                    p.close();
                }
                OPEN.clear();
            }
        }
    }
}

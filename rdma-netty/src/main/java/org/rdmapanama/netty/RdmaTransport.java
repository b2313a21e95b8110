package org.rdmapanama.netty;

import io.netty.channel.IoHandlerFactory;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.ChannelOptions;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.error.RdmaException;

import java.net.InetAddress;

/**
 * The RDMA side of a Netty application: one {@link ChannelGroup} (device,
 * protection domain, registered buffer pool, connection manager) without loop
 * threads of its own, whose loops the Netty event loops made by
 * {@link #ioHandlerFactory()} turn. Boss and worker groups share one transport,
 * so that an accepted child is on the same device context as its listener.
 * Close it after every event-loop group that uses it has terminated.
 */
public final class RdmaTransport implements AutoCloseable {
    private final ChannelGroup group;
    private final RdmaByteBufAllocator allocator;

    private RdmaTransport(ChannelGroup group) {
        this.group = group;
        this.allocator = new RdmaByteBufAllocator(group);
    }

    /**
     * A transport on the device {@code config} selects ({@code transport=iwarp}, {@code device=rxe0}, ...;
     * {@link RdmaConfig#load()} reads them from the environment). {@code options.loops()} is ignored (Netty's
     * threads turn the loops); the send queue is kept near the window, so that what waits to be sent waits in
     * Netty's outbound buffer, where its water marks see it.
     */
    public static RdmaTransport open(RdmaConfig config, ChannelOptions options) throws RdmaException {
        ChannelOptions o = options.withLoops(0)
                .withSendQueueLimit(Math.min(options.sendQueueLimit(), 2 * options.window()));
        return new RdmaTransport(ChannelGroup.open(config, o));
    }

    /** {@link #open} with the default options on the device {@link RdmaConfig#load()} selects. */
    public static RdmaTransport open() throws RdmaException {
        return open(RdmaConfig.load(), ChannelOptions.defaults());
    }

    /** For {@code new MultiThreadIoEventLoopGroup(n, transport.ioHandlerFactory())}. */
    public IoHandlerFactory ioHandlerFactory() {
        return RdmaIoHandler.newFactory(this);
    }

    /** The IP address of the device's interface: what servers bind to and clients connect to. */
    public InetAddress address() {
        return group.address();
    }

    /**
     * Direct buffers in the registered pool: written to this transport's channels, they are sent without a
     * copy. The channels' {@code ALLOCATOR} unless the application sets another.
     */
    public RdmaByteBufAllocator allocator() {
        return allocator;
    }

    public ChannelGroup group() {
        return group;
    }

    public ChannelOptions options() {
        return group.options();
    }

    @Override
    public void close() throws RdmaException {
        group.close();
    }

    @Override
    public String toString() {
        return "RDMA transport on " + group;
    }
}

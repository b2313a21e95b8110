package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.internal.Cm;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A listening rdma_cm_id: {@code rdma_bind_addr}, {@code rdma_listen}, and
 * {@link #accept} for each connect request. Closing it while another thread
 * waits in {@code accept} makes that accept throw {@link org.rdmapanama.ClosedResourceException}.
 */
public final class RdmaListener implements AutoCloseable {
    private final EventChannel channel;
    private final CmId id;
    private final InetSocketAddress address;
    private final ConnectionOptions options;

    private RdmaListener(EventChannel channel, CmId id, InetSocketAddress address, ConnectionOptions options) {
        this.channel = channel;
        this.id = id;
        this.address = address;
        this.options = options;
    }

    /** Binds to {@code address} (its IP picks the device) and listens with {@code backlog}. */
    public static RdmaListener bind(InetSocketAddress address, int backlog, ConnectionOptions options)
            throws RdmaException {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be at least 1, got " + backlog);
        }
        EventChannel channel = EventChannel.create();
        CmId id = null;
        boolean ok = false;
        try {
            id = CmId.create(channel, "rdma_cm listener on " + address);
            try (Arena a = Arena.ofConfined()) {
                Cm.BIND_ADDR.status(address.toString(), id.id(), CmId.sockaddr(a, address));
            }
            Cm.LISTEN.status(address.toString(), id.id(), backlog);
            ok = true;
            return new RdmaListener(channel, id, address, options);
        } finally {
            if (!ok) {
                Cleanup.closeQuietly(id);
                Cleanup.closeQuietly(channel);
            }
        }
    }

    public InetSocketAddress address() {
        return address;
    }

    /**
     * Waits for a connect request and returns it as a connection with its
     * QP ready, not yet accepted: read {@link RdmaConnection#peerPrivateData()},
     * register memory, then {@link RdmaConnection#accept} or {@link RdmaConnection#reject}.
     * Returns null when {@code timeout} passes first.
     */
    public RdmaConnection accept(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            CmEvent ev = channel.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (ev == null) {
                return null;
            }
            if (ev.type() == CmEventType.CONNECT_REQUEST) {
                return RdmaConnection.fromRequest(ev, options);
            }
            if (ev.type() == CmEventType.DEVICE_REMOVAL) {
                throw new CmException("the device of the listener on " + address + " was removed",
                        ev.type(), ev.status());
            }
            // Anything else on a listening id is noise (e.g. ADDR_CHANGE): keep waiting.
        }
    }

    @Override
    public void close() throws RdmaException {
        RdmaException first = null;
        try {
            id.close();
        } catch (RdmaException e) {
            first = e;
        }
        channel.close();
        if (first != null) {
            throw first;
        }
    }
}

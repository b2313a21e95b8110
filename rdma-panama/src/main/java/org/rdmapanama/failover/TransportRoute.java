package org.rdmapanama.failover;

import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.Transport;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One way to reach a peer for {@link TransportFailover}: the transport, and the
 * peer's address on its device of that transport. rdma_cm picks the local
 * device by the address (the interface the route to it leaves by), so each
 * transport needs an address of its own; the failover checks that the device
 * the address resolves to really has {@code transport}.
 *
 * @param transport what the connection must run on
 * @param remote    the peer's address on that transport's interface (and its port)
 * @param local     the local address to connect from, or null to let routing pick it
 */
public record TransportRoute(Transport transport, InetSocketAddress remote, InetSocketAddress local) {
    public TransportRoute {
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(remote, "remote");
        if (remote.isUnresolved()) {
            throw new IllegalArgumentException("the " + transport.displayName() + " route's address " + remote
                    + " is unresolved");
        }
    }

    public TransportRoute(Transport transport, InetSocketAddress remote) {
        this(transport, remote, null);
    }

    /**
     * The routes for {@code config}'s transport preference, in its order, each
     * to the address {@code peers} gives for that transport.
     *
     * @throws IllegalArgumentException when the preference is empty, or names a transport
     *                                  {@code peers} has no address for
     */
    public static List<TransportRoute> preferred(RdmaConfig config, Map<Transport, InetSocketAddress> peers) {
        if (config.transports().isEmpty()) {
            throw new IllegalArgumentException("no transport preference to follow (set transport=, e.g. rocev2,iwarp)"
                    + origin(config));
        }
        List<TransportRoute> routes = new ArrayList<>();
        for (Transport t : config.transports()) {
            InetSocketAddress at = peers.get(t);
            if (at == null) {
                throw new IllegalArgumentException("the transport preference " + config.transports() + origin(config)
                        + " names " + t.displayName() + ", but no peer address is given for it (addresses for: "
                        + peers.keySet() + ")");
            }
            routes.add(new TransportRoute(t, at));
        }
        return routes;
    }

    private static String origin(RdmaConfig config) {
        String o = config.origins().get("transport");
        return o == null ? "" : " (from " + o + ")";
    }

    @Override
    public String toString() {
        return transport.displayName() + " to " + remote.getAddress().getHostAddress() + ":" + remote.getPort()
                + (local == null ? "" : " from " + local.getAddress().getHostAddress());
    }
}

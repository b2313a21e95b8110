package org.rdmapanama.nettybench;

import java.util.List;

/**
 * What carries the echo: Netty on the RDMA transport or on epoll TCP, rdma-panama's message channel
 * without Netty, or gRPC over either Netty transport. A gRPC client measures unary calls and a
 * bidirectional stream, so it writes two series.
 */
public enum Side {
    NETTY_RDMA("netty-rdma", true, 0),
    NETTY_EPOLL("netty-epoll", false, 3),
    CHANNEL("channel", true, 1),
    GRPC_RDMA("grpc-rdma", true, 2),
    GRPC_EPOLL("grpc-epoll", false, 4);

    /** The port of the first side; each side listens at its offset from it. */
    public static final int BASE_PORT = 18600;

    public final String label;
    /** Over an RDMA device rather than TCP on its interface. */
    public final boolean rdma;
    /** Ports differ per side: on siw an rdma_cm listener holds the kernel TCP port of its number. */
    public final int portOffset;

    Side(String label, boolean rdma, int portOffset) {
        this.label = label;
        this.rdma = rdma;
        this.portOffset = portOffset;
    }

    public boolean grpc() {
        return this == GRPC_RDMA || this == GRPC_EPOLL;
    }

    /** The series this side's client writes: one, or a gRPC side's unary and stream. */
    public List<String> series() {
        String net = rdma ? "rdma" : "epoll";
        return grpc() ? List.of("grpc-unary-" + net, "grpc-stream-" + net) : List.of(label);
    }

    public static Side of(String label) {
        for (Side s : values()) {
            if (s.label.equals(label)) {
                return s;
            }
        }
        throw new IllegalArgumentException("no side '" + label + "' (netty-rdma, netty-epoll, channel, grpc-rdma, grpc-epoll)");
    }
}

package org.rdmapanama.internal;

import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.rdma_cm_event;
import org.rdmapanama.ffi.rdma_addr;
import org.rdmapanama.ffi.rdma_cm_id;
import org.rdmapanama.ffi.rdma_route;
import org.rdmapanama.ffi.rdma_conn_param;
import org.rdmapanama.ffi.rdma_event_channel;
import org.rdmapanama.ffi.sockaddr_in6;
import org.rdmapanama.ffi.sockaddr_in;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * librdmacm's structs: {@code struct rdma_event_channel}, {@code rdma_cm_id},
 * {@code rdma_cm_event} with its {@code rdma_conn_param}, and the socket
 * addresses rdma_cm resolves and binds.
 */
public final class CmStructs {
    private CmStructs() {}

    public static final long EVENT_CHANNEL_SIZE = rdma_event_channel.sizeof();
    public static final long CM_ID_SIZE = rdma_cm_id.sizeof();
    public static final long CM_EVENT_SIZE = rdma_cm_event.sizeof();
    public static final int PS_TCP = Rdma.RDMA_PS_TCP();

    public static int channelFd(MemorySegment channel) {
        return rdma_event_channel.fd(channel.reinterpret(EVENT_CHANNEL_SIZE));
    }

    /** A cm_id's {@code verbs}: the {@code struct ibv_context *} of its device, NULL before it is bound. */
    public static MemorySegment idContext(MemorySegment id) {
        return rdma_cm_id.verbs(id.reinterpret(CM_ID_SIZE));
    }

    /** A cm_id's {@code qp}. */
    public static MemorySegment idQp(MemorySegment id) {
        return rdma_cm_id.qp(id.reinterpret(CM_ID_SIZE));
    }

    // --- struct rdma_cm_event ---

    public static int eventType(MemorySegment ev) {
        return rdma_cm_event.event(ev.reinterpret(CM_EVENT_SIZE));
    }

    public static int eventStatus(MemorySegment ev) {
        return rdma_cm_event.status(ev.reinterpret(CM_EVENT_SIZE));
    }

    public static MemorySegment eventId(MemorySegment ev) {
        return rdma_cm_event.id(ev.reinterpret(CM_EVENT_SIZE));
    }

    public static MemorySegment eventListenId(MemorySegment ev) {
        return rdma_cm_event.listen_id(ev.reinterpret(CM_EVENT_SIZE));
    }

    private static MemorySegment conn(MemorySegment ev) {
        return rdma_cm_event.param.conn(rdma_cm_event.param(ev.reinterpret(CM_EVENT_SIZE)));
    }

    /** The event's private data, a copy; only for events whose param is {@code conn}. */
    public static byte[] eventPrivateData(MemorySegment ev) {
        MemorySegment conn = conn(ev);
        int len = Byte.toUnsignedInt(rdma_conn_param.private_data_len(conn));
        MemorySegment p = rdma_conn_param.private_data(conn);
        return len > 0 && !p.equals(MemorySegment.NULL) ? p.reinterpret(len).toArray(JAVA_BYTE) : new byte[0];
    }

    /** Only for events whose param is {@code conn}. */
    public static int eventResponderResources(MemorySegment ev) {
        return Byte.toUnsignedInt(rdma_conn_param.responder_resources(conn(ev)));
    }

    /** Only for events whose param is {@code conn}. */
    public static int eventInitiatorDepth(MemorySegment ev) {
        return Byte.toUnsignedInt(rdma_conn_param.initiator_depth(conn(ev)));
    }

    /** A {@code struct rdma_conn_param} in {@code arena}; {@code privateData} at most 255 bytes. */
    public static MemorySegment connParam(Arena arena, byte[] privateData, int responderResources,
                                          int initiatorDepth, int retryCount, int rnrRetryCount) {
        MemorySegment p = arena.allocate(rdma_conn_param.layout());
        if (privateData.length > 0) {
            rdma_conn_param.private_data(p, arena.allocateFrom(JAVA_BYTE, privateData));
            rdma_conn_param.private_data_len(p, (byte) privateData.length);
        }
        rdma_conn_param.responder_resources(p, (byte) responderResources);
        rdma_conn_param.initiator_depth(p, (byte) initiatorDepth);
        rdma_conn_param.retry_count(p, (byte) retryCount);
        rdma_conn_param.rnr_retry_count(p, (byte) rnrRetryCount);
        return p;
    }

    /** A {@code struct sockaddr_in} or {@code sockaddr_in6} for {@code address}, in {@code arena}. */
    public static MemorySegment sockaddr(Arena arena, InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (ip == null) {
            throw new IllegalArgumentException("unresolved address " + address);
        }
        short port = Short.reverseBytes((short) address.getPort()); // network order
        if (ip instanceof Inet4Address) {
            MemorySegment sa = arena.allocate(sockaddr_in.layout());
            sockaddr_in.sin_family(sa, (short) Rdma.AF_INET());
            sockaddr_in.sin_port(sa, port);
            sockaddr_in.sin_addr(sa).copyFrom(MemorySegment.ofArray(ip.getAddress()));
            return sa;
        }
        MemorySegment sa = arena.allocate(sockaddr_in6.layout());
        sockaddr_in6.sin6_family(sa, (short) Rdma.AF_INET6());
        sockaddr_in6.sin6_port(sa, port);
        sockaddr_in6.sin6_addr(sa).copyFrom(MemorySegment.ofArray(ip.getAddress()));
        return sa;
    }

    /**
     * The local ({@code src_addr}) or peer ({@code dst_addr}) address that rdma_cm keeps in a cm_id's route,
     * the port included (after a bind to port 0, the one it chose); null when it holds none yet.
     */
    public static InetSocketAddress routeAddress(MemorySegment id, boolean local) {
        MemorySegment addr = rdma_route.addr(rdma_cm_id.route(id));
        MemorySegment in = local ? rdma_addr.src_sin(addr) : rdma_addr.dst_sin(addr);
        MemorySegment in6 = local ? rdma_addr.src_sin6(addr) : rdma_addr.dst_sin6(addr);
        int family = sockaddr_in.sin_family(in) & 0xffff;
        byte[] ip;
        short port;
        if (family == Rdma.AF_INET()) {
            ip = sockaddr_in.sin_addr(in).toArray(JAVA_BYTE);
            port = sockaddr_in.sin_port(in);
        } else if (family == Rdma.AF_INET6()) {
            ip = sockaddr_in6.sin6_addr(in6).toArray(JAVA_BYTE);
            port = sockaddr_in6.sin6_port(in6);
        } else {
            return null;
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), Short.reverseBytes(port) & 0xffff);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("an address of " + ip.length + " bytes", e); // 4 or 16: cannot happen
        }
    }
}

package org.rdmapanama.internal;

import org.rdmapanama.ffi.Rdma;

import static org.rdmapanama.ffi.Rdma.C_CHAR;
import static org.rdmapanama.ffi.Rdma.C_INT;
import static org.rdmapanama.ffi.Rdma.C_POINTER;

/** The librdmacm calls, linked with errno capture on first use (they return -1 and set errno). */
public final class Cm {
    private Cm() {}

    public static final NativeCall CREATE_EVENT_CHANNEL = Verbs.call("rdma_create_event_channel", C_POINTER);
    public static final NativeCall CREATE_ID = Verbs.call("rdma_create_id", C_INT, C_POINTER, C_POINTER, C_POINTER, C_INT);
    public static final NativeCall DESTROY_ID = Verbs.call("rdma_destroy_id", C_INT, C_POINTER);
    public static final NativeCall BIND_ADDR = Verbs.call("rdma_bind_addr", C_INT, C_POINTER, C_POINTER);
    public static final NativeCall LISTEN = Verbs.call("rdma_listen", C_INT, C_POINTER, C_INT);
    public static final NativeCall RESOLVE_ADDR = Verbs.call("rdma_resolve_addr", C_INT, C_POINTER, C_POINTER, C_POINTER, C_INT);
    public static final NativeCall RESOLVE_ROUTE = Verbs.call("rdma_resolve_route", C_INT, C_POINTER, C_INT);
    public static final NativeCall CONNECT = Verbs.call("rdma_connect", C_INT, C_POINTER, C_POINTER);
    public static final NativeCall ACCEPT = Verbs.call("rdma_accept", C_INT, C_POINTER, C_POINTER);
    public static final NativeCall REJECT = Verbs.call("rdma_reject", C_INT, C_POINTER, C_POINTER, C_CHAR);
    public static final NativeCall DISCONNECT = Verbs.call("rdma_disconnect", C_INT, C_POINTER);
    public static final NativeCall GET_CM_EVENT = Verbs.call("rdma_get_cm_event", C_INT, C_POINTER, C_POINTER);
    public static final NativeCall ACK_CM_EVENT = Verbs.call("rdma_ack_cm_event", C_INT, C_POINTER);
    public static final NativeCall CREATE_QP = Verbs.call("rdma_create_qp", C_INT, C_POINTER, C_POINTER, C_POINTER);
    public static final NativeCall MIGRATE_ID = Verbs.call("rdma_migrate_id", C_INT, C_POINTER, C_POINTER);

    /** {@code rdma_destroy_event_channel} returns void. */
    public static void destroyEventChannel(java.lang.foreign.MemorySegment channel) {
        Rdma.rdma_destroy_event_channel(channel);
    }

    /** {@code rdma_destroy_qp} returns void. */
    public static void destroyQp(java.lang.foreign.MemorySegment id) {
        Rdma.rdma_destroy_qp(id);
    }
}

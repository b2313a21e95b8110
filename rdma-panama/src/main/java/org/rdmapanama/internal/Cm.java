package org.rdmapanama.internal;

import org.rdmapanama.ffi.Rdma;

/** The librdmacm calls, linked with errno capture (they return -1 and set errno). */
public final class Cm {
    private Cm() {}

    public static final NativeCall CREATE_EVENT_CHANNEL = Verbs.call("rdma_create_event_channel",
            Rdma.rdma_create_event_channel$address(), Rdma.rdma_create_event_channel$descriptor());
    public static final NativeCall CREATE_ID = Verbs.call("rdma_create_id",
            Rdma.rdma_create_id$address(), Rdma.rdma_create_id$descriptor());
    public static final NativeCall DESTROY_ID = Verbs.call("rdma_destroy_id",
            Rdma.rdma_destroy_id$address(), Rdma.rdma_destroy_id$descriptor());
    public static final NativeCall BIND_ADDR = Verbs.call("rdma_bind_addr",
            Rdma.rdma_bind_addr$address(), Rdma.rdma_bind_addr$descriptor());
    public static final NativeCall LISTEN = Verbs.call("rdma_listen",
            Rdma.rdma_listen$address(), Rdma.rdma_listen$descriptor());
    public static final NativeCall RESOLVE_ADDR = Verbs.call("rdma_resolve_addr",
            Rdma.rdma_resolve_addr$address(), Rdma.rdma_resolve_addr$descriptor());
    public static final NativeCall RESOLVE_ROUTE = Verbs.call("rdma_resolve_route",
            Rdma.rdma_resolve_route$address(), Rdma.rdma_resolve_route$descriptor());
    public static final NativeCall CONNECT = Verbs.call("rdma_connect",
            Rdma.rdma_connect$address(), Rdma.rdma_connect$descriptor());
    public static final NativeCall ACCEPT = Verbs.call("rdma_accept",
            Rdma.rdma_accept$address(), Rdma.rdma_accept$descriptor());
    public static final NativeCall REJECT = Verbs.call("rdma_reject",
            Rdma.rdma_reject$address(), Rdma.rdma_reject$descriptor());
    public static final NativeCall DISCONNECT = Verbs.call("rdma_disconnect",
            Rdma.rdma_disconnect$address(), Rdma.rdma_disconnect$descriptor());
    public static final NativeCall GET_CM_EVENT = Verbs.call("rdma_get_cm_event",
            Rdma.rdma_get_cm_event$address(), Rdma.rdma_get_cm_event$descriptor());
    public static final NativeCall ACK_CM_EVENT = Verbs.call("rdma_ack_cm_event",
            Rdma.rdma_ack_cm_event$address(), Rdma.rdma_ack_cm_event$descriptor());
    public static final NativeCall CREATE_QP = Verbs.call("rdma_create_qp",
            Rdma.rdma_create_qp$address(), Rdma.rdma_create_qp$descriptor());
    public static final NativeCall MIGRATE_ID = Verbs.call("rdma_migrate_id",
            Rdma.rdma_migrate_id$address(), Rdma.rdma_migrate_id$descriptor());

    /** {@code rdma_destroy_event_channel} returns void. */
    public static void destroyEventChannel(java.lang.foreign.MemorySegment channel) {
        Rdma.rdma_destroy_event_channel(channel);
    }

    /** {@code rdma_destroy_qp} returns void. */
    public static void destroyQp(java.lang.foreign.MemorySegment id) {
        Rdma.rdma_destroy_qp(id);
    }
}

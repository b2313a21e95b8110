package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.Rdma;

import java.lang.foreign.MemorySegment;

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
    public static final NativeCall SET_OPTION = Verbs.call("rdma_set_option", C_INT, C_POINTER, C_INT, C_INT, C_POINTER,
            org.rdmapanama.ffi.Rdma.C_LONG);
    public static final int OPTION_ID = org.rdmapanama.ffi.Rdma.RDMA_OPTION_ID();
    public static final int OPTION_ID_ACK_TIMEOUT = org.rdmapanama.ffi.Rdma.RDMA_OPTION_ID_ACK_TIMEOUT();
    public static final NativeCall MIGRATE_ID = Verbs.call("rdma_migrate_id", C_INT, C_POINTER, C_POINTER);

    /**
     * {@code rdma_get_devices}: librdmacm's own contexts, one per device, as a
     * NULL-terminated array; each listed device is referenced (not closed even
     * if removed) until {@link #freeDevices}. Not in the generated bindings, so
     * linked here by name with rdma_cma.h's signature.
     */
    public static MemorySegment getDevices() throws RdmaException {
        return ByHand.GET_DEVICES.pointer("", MemorySegment.NULL);
    }

    /** {@code rdma_free_devices}: drops the references {@link #getDevices} took. */
    public static void freeDevices(MemorySegment list) {
        try {
            ByHand.FREE_DEVICES.invokeExact(list);
        } catch (Throwable t) {
            throw new IllegalStateException("rdma_free_devices", t);
        }
    }

    /** The {@code i}-th context of a {@link #getDevices} list; NULL past its end. */
    public static MemorySegment deviceAt(MemorySegment list, int i) {
        return list.reinterpret((i + 1L) * C_POINTER.byteSize()).getAtIndex(C_POINTER, i);
    }

    /** Kept out of {@link Cm}'s fields: those are each held equal to a generated descriptor. */
    private static final class ByHand {
        static final NativeCall GET_DEVICES = Verbs.call("rdma_get_devices", C_POINTER, C_POINTER);
        static final java.lang.invoke.MethodHandle FREE_DEVICES;

        static {
            try {
                FREE_DEVICES = Link.plain(NativeLibraries.symbol("rdma_free_devices"),
                        java.lang.foreign.FunctionDescriptor.ofVoid(C_POINTER));
            } catch (RdmaException e) {
                throw new IllegalStateException(e.getMessage(), e); // getDevices loaded the libraries first
            }
        }
    }

    /** {@code rdma_destroy_event_channel} returns void. */
    public static void destroyEventChannel(java.lang.foreign.MemorySegment channel) {
        Rdma.rdma_destroy_event_channel(channel);
    }

    /** Links the calls a passive connection makes, so that the first one does not wait for the linker. */
    public static void linkAccept() throws RdmaException {
        for (NativeCall c : new NativeCall[] {CREATE_QP, ACCEPT, REJECT, DISCONNECT, DESTROY_ID}) {
            c.link();
        }
        Rdma.rdma_destroy_qp$handle(); // its holder class links it
    }

    /** {@code rdma_destroy_qp} returns void. */
    public static void destroyQp(java.lang.foreign.MemorySegment id) {
        Rdma.rdma_destroy_qp(id);
    }
}

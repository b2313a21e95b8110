package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_device;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.rdmapanama.ffi.Rdma.C_INT;
import static org.rdmapanama.ffi.Rdma.C_LONG;
import static org.rdmapanama.ffi.Rdma.C_POINTER;

/**
 * Checked wrappers for the libibverbs control-path calls: one method per verb,
 * which turns a failure into an {@link RdmaException} naming the verb and errno.
 * <p>
 * The calls declared in {@link Calls} are linked by {@link NativeCall} with
 * errno capture, which jextract does not generate; a few that return the
 * errno value, or cannot fail, use the generated handles.
 */
public final class Verbs {
    private Verbs() {}

    /**
     * {@code ibv_get_device_list}: the NULL-terminated array of devices, sized
     * to {@code count} entries, or NULL with a count of 0 when the kernel has no
     * RDMA support. Free it with {@link #freeDeviceList}.
     */
    public static MemorySegment getDeviceList(MemorySegment count) throws RdmaException {
        NativeLibraries.require();
        try {
            return Calls.GET_DEVICE_LIST.pointer("", count);
        } catch (RdmaException e) {
            if (e.errno() != Errno.ENOSYS) {
                throw e;
            }
            // A kernel without uverbs: to a user that is "no devices".
            count.set(JAVA_INT, 0, 0);
            return MemorySegment.NULL;
        }
    }

    public static void freeDeviceList(MemorySegment list) {
        if (!list.equals(MemorySegment.NULL)) {
            Rdma.ibv_free_device_list(list);
        }
    }

    public static String deviceName(MemorySegment device) {
        return Rdma.ibv_get_device_name(device).reinterpret(Rdma.IBV_SYSFS_NAME_MAX()).getString(0);
    }

    /** {@code ibv_get_device_guid}, converted from big-endian to a plain number. */
    public static long deviceGuid(MemorySegment device) {
        return Long.reverseBytes(Rdma.ibv_get_device_guid(device));
    }

    public static int transportType(MemorySegment device) {
        return ibv_device.transport_type(device.reinterpret(ibv_device.sizeof()));
    }

    public static int nodeType(MemorySegment device) {
        return ibv_device.node_type(device.reinterpret(ibv_device.sizeof()));
    }

    public static MemorySegment openDevice(MemorySegment device, String name) throws RdmaException {
        return Calls.OPEN_DEVICE.pointer(name, device);
    }

    public static void closeDevice(MemorySegment context, String name) throws RdmaException {
        Errno.check(Errno.ofStatus(Rdma.ibv_close_device(context)), "ibv_close_device", name);
    }

    public static void queryDevice(MemorySegment context, MemorySegment attr, String name) throws RdmaException {
        Errno.check(Errno.ofStatus(Rdma.ibv_query_device(context, attr)), "ibv_query_device", name);
    }

    /**
     * The exported {@code ibv_query_port}, given a whole zeroed
     * {@code struct ibv_port_attr}: what verbs.h's inline wrapper does when the
     * provider has no extended query_port.
     */
    public static void queryPort(MemorySegment context, int port, MemorySegment attr, String name) throws RdmaException {
        attr.fill((byte) 0);
        Errno.check(Errno.ofStatus(Rdma.ibv_query_port(context, (byte) port, attr)), "ibv_query_port",
                name + " port " + port);
    }

    /**
     * {@code ibv_query_gid_table}: the valid GID entries of all ports, with
     * their types. Returns how many were written, or -errno.
     */
    public static long queryGidTable(MemorySegment context, MemorySegment entries, long maxEntries, long entrySize) {
        return Rdma._ibv_query_gid_table(context, entries, maxEntries, 0, entrySize);
    }

    /** {@code ibv_query_gid}, for providers without the GID table query. */
    public static int queryGid(MemorySegment context, int port, int index, MemorySegment gid) {
        return Rdma.ibv_query_gid(context, (byte) port, index, gid);
    }

    /** A C function {@code name} of libibverbs or librdmacm: its result's layout, then its parameters'. */
    static NativeCall call(String name, MemoryLayout result, MemoryLayout... parameters) {
        return new NativeCall(name, FunctionDescriptor.of(result, parameters));
    }

    /** The control-path verbs, linked with errno capture on first use (see {@link NativeCall}). */
    public static final class Calls {
        private Calls() {}

        public static final NativeCall GET_DEVICE_LIST = call("ibv_get_device_list", C_POINTER, C_POINTER);
        public static final NativeCall OPEN_DEVICE = call("ibv_open_device", C_POINTER, C_POINTER);
        public static final NativeCall ALLOC_PD = call("ibv_alloc_pd", C_POINTER, C_POINTER);
        public static final NativeCall DEALLOC_PD = call("ibv_dealloc_pd", C_INT, C_POINTER);
        public static final NativeCall REG_MR = call("ibv_reg_mr", C_POINTER, C_POINTER, C_POINTER, C_LONG, C_INT);
        public static final NativeCall DEREG_MR = call("ibv_dereg_mr", C_INT, C_POINTER);
        public static final NativeCall CREATE_COMP_CHANNEL = call("ibv_create_comp_channel", C_POINTER, C_POINTER);
        public static final NativeCall DESTROY_COMP_CHANNEL = call("ibv_destroy_comp_channel", C_INT, C_POINTER);
        public static final NativeCall CREATE_CQ = call("ibv_create_cq", C_POINTER, C_POINTER, C_INT, C_POINTER, C_POINTER, C_INT);
        public static final NativeCall DESTROY_CQ = call("ibv_destroy_cq", C_INT, C_POINTER);
        public static final NativeCall GET_ASYNC_EVENT = call("ibv_get_async_event", C_INT, C_POINTER, C_POINTER);
        public static final NativeCall GET_CQ_EVENT = call("ibv_get_cq_event", C_INT, C_POINTER, C_POINTER, C_POINTER);
        public static final NativeCall CREATE_QP = call("ibv_create_qp", C_POINTER, C_POINTER, C_POINTER);
        public static final NativeCall MODIFY_QP = call("ibv_modify_qp", C_INT, C_POINTER, C_POINTER, C_INT);
        public static final NativeCall QUERY_QP = call("ibv_query_qp", C_INT, C_POINTER, C_POINTER, C_INT, C_POINTER);
        public static final NativeCall DESTROY_QP = call("ibv_destroy_qp", C_INT, C_POINTER);
        public static final NativeCall CREATE_SRQ = call("ibv_create_srq", C_POINTER, C_POINTER, C_POINTER);
        public static final NativeCall MODIFY_SRQ = call("ibv_modify_srq", C_INT, C_POINTER, C_POINTER, C_INT);
        public static final NativeCall DESTROY_SRQ = call("ibv_destroy_srq", C_INT, C_POINTER);
        public static final NativeCall CREATE_AH = call("ibv_create_ah", C_POINTER, C_POINTER, C_POINTER);
        public static final NativeCall DESTROY_AH = call("ibv_destroy_ah", C_INT, C_POINTER);
    }

    /** {@code ibv_ack_cq_events} (void): acknowledges {@code count} events of {@code cq}. */
    public static void ackCqEvents(MemorySegment cq, int count) {
        Rdma.ibv_ack_cq_events(cq, count);
    }

    /**
     * {@code ibv_get_cq_event} and {@code ibv_ack_cq_events} for a wait that
     * repeats: linked directly (no {@link NativeCall} boxing) with the errno
     * capture state from the caller, so a call allocates nothing. The ack takes
     * the CQ by address: a CQ being destroyed waits in libibverbs for this very
     * ack, so its Java segment may already be closed.
     */
    public static final class CqEvents {
        private CqEvents() {}

        private static final MethodHandle GET;
        private static final MethodHandle GET_NO_ERRNO; // allocates nothing (why: Libc, POLL_NO_ERRNO)
        private static final MethodHandle ACK;

        static {
            try {
                GET = Link.withErrno(NativeLibraries.symbol("ibv_get_cq_event"),
                        FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_POINTER));
                GET_NO_ERRNO = Link.plain(NativeLibraries.symbol("ibv_get_cq_event"),
                        FunctionDescriptor.of(C_INT, C_POINTER, C_POINTER, C_POINTER));
                ACK = Link.plain(NativeLibraries.symbol("ibv_ack_cq_events"),
                        FunctionDescriptor.ofVoid(JAVA_LONG, C_INT));
            } catch (RdmaException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
        }

        /** Links them now, so that the first wait cannot fail on it. */
        public static void link() {
        }

        /**
         * {@code ibv_get_cq_event}: 0, or -errno ({@code -EAGAIN} on a non-blocking channel with no event).
         * Allocates nothing when it gets an event. Only when it fails is it called again with errno captured
         * in {@code state} (which allocates), to say why: the channel is non-blocking, so the second call
         * either takes an event that came meanwhile or fails again.
         */
        public static int get(MemorySegment state, MemorySegment channel, MemorySegment cqOut, MemorySegment ctxOut) {
            int rc;
            try {
                rc = (int) GET_NO_ERRNO.invokeExact(channel, cqOut, ctxOut);
                if (rc != -1) {
                    return Errno.ofStatus(rc);
                }
                rc = (int) GET.invokeExact(state, channel, cqOut, ctxOut);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("ibv_get_cq_event", t);
            }
            return rc == -1 ? -Link.errno(state) : Errno.ofStatus(rc);
        }

        /** {@code ibv_ack_cq_events} of the CQ at {@code cq}. */
        public static void ack(long cq, int count) {
            try {
                ACK.invokeExact(cq, count);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("ibv_ack_cq_events", t);
            }
        }
    }

    /** {@code ibv_ack_async_event} (void). */
    public static void ackAsyncEvent(MemorySegment event) {
        Rdma.ibv_ack_async_event(event);
    }

    private static final String[] WC_STATUS_TEXT = new String[32];

    /** {@code ibv_wc_status_str}, cached: the strings are static in libibverbs. */
    public static String wcStatusText(int status) {
        if (status < 0 || status >= WC_STATUS_TEXT.length) {
            return "unknown";
        }
        String s = WC_STATUS_TEXT[status];
        if (s == null) {
            s = Rdma.ibv_wc_status_str(status).reinterpret(128).getString(0);
            WC_STATUS_TEXT[status] = s;
        }
        return s;
    }
}

package org.rdmapanama.internal;

import org.rdmapanama.ffi.ibv_ah;
import org.rdmapanama.ffi.ibv_async_event;
import org.rdmapanama.ffi.ibv_comp_channel;
import org.rdmapanama.ffi.ibv_context;
import org.rdmapanama.ffi.ibv_context_ops;
import org.rdmapanama.ffi.ibv_cq;
import org.rdmapanama.ffi.ibv_mr;
import org.rdmapanama.ffi.ibv_pd;
import org.rdmapanama.ffi.ibv_srq;
import org.rdmapanama.ffi.ibv_srq_attr;
import org.rdmapanama.ffi.ibv_srq_init_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The sizes of the verbs objects' structs, and the few fields the runtime
 * reads from them: a context's ops table and fds, a CQ's size, an MR's keys,
 * a completion channel's fd, an SRQ's init attributes, an async event.
 */
public final class VerbsObjects {
    private VerbsObjects() {}

    public static final long CONTEXT_SIZE = ibv_context.sizeof();
    public static final long PD_SIZE = ibv_pd.sizeof();
    public static final long MR_SIZE = ibv_mr.sizeof();
    public static final long CQ_SIZE = ibv_cq.sizeof();
    public static final long COMP_CHANNEL_SIZE = ibv_comp_channel.sizeof();
    public static final long SRQ_SIZE = ibv_srq.sizeof();
    public static final long AH_SIZE = ibv_ah.sizeof();

    // --- struct ibv_context and its ops: the inline verbs' function pointers ---

    private static MemorySegment ops(MemorySegment context) {
        return ibv_context.ops(context.reinterpret(CONTEXT_SIZE));
    }

    public static MemorySegment pollCqFn(MemorySegment context) {
        return ibv_context_ops.poll_cq(ops(context));
    }

    public static MemorySegment reqNotifyCqFn(MemorySegment context) {
        return ibv_context_ops.req_notify_cq(ops(context));
    }

    public static MemorySegment postSendFn(MemorySegment context) {
        return ibv_context_ops.post_send(ops(context));
    }

    public static MemorySegment postRecvFn(MemorySegment context) {
        return ibv_context_ops.post_recv(ops(context));
    }

    public static MemorySegment postSrqRecvFn(MemorySegment context) {
        return ibv_context_ops.post_srq_recv(ops(context));
    }

    /** The context's {@code struct ibv_device *}, as an address. */
    public static long deviceOf(MemorySegment context) {
        return ibv_context.device(context.reinterpret(CONTEXT_SIZE)).address();
    }

    public static int asyncFd(MemorySegment context) {
        return ibv_context.async_fd(context.reinterpret(CONTEXT_SIZE));
    }

    // --- the other objects' fields ---

    public static int compChannelFd(MemorySegment channel) {
        return ibv_comp_channel.fd(channel.reinterpret(COMP_CHANNEL_SIZE));
    }

    /** A CQ's {@code cqe}: the entries the provider gave it. */
    public static int cqEntries(MemorySegment cq) {
        return ibv_cq.cqe(cq.reinterpret(CQ_SIZE));
    }

    public static int lkey(MemorySegment mr) {
        return ibv_mr.lkey(mr.reinterpret(MR_SIZE));
    }

    public static int rkey(MemorySegment mr) {
        return ibv_mr.rkey(mr.reinterpret(MR_SIZE));
    }

    /** A {@code struct ibv_srq_init_attr} asking for {@code maxWr} receives of {@code maxSge} SGEs. */
    public static MemorySegment srqInitAttr(Arena arena, int maxWr, int maxSge) {
        MemorySegment init = arena.allocate(ibv_srq_init_attr.layout());
        MemorySegment attr = ibv_srq_init_attr.attr(init);
        ibv_srq_attr.max_wr(attr, maxWr);
        ibv_srq_attr.max_sge(attr, maxSge);
        return init;
    }

    // --- struct ibv_async_event ---

    public static MemorySegment allocateAsyncEvent(Arena arena) {
        return arena.allocate(ibv_async_event.layout());
    }

    public static int asyncEventType(MemorySegment event) {
        return ibv_async_event.event_type(event);
    }

    /** The address of the event's CQ. */
    public static long asyncEventCq(MemorySegment event) {
        return ibv_async_event.element.cq(ibv_async_event.element(event)).address();
    }

    /** The address of the event's QP. */
    public static long asyncEventQp(MemorySegment event) {
        return ibv_async_event.element.qp(ibv_async_event.element(event)).address();
    }

    /** The number of the event's QP. */
    public static int asyncEventQpNumber(MemorySegment event) {
        return QpAttributes.qpNumber(ibv_async_event.element.qp(ibv_async_event.element(event)));
    }

    public static int asyncEventPort(MemorySegment event) {
        return ibv_async_event.element.port_num(ibv_async_event.element(event));
    }
}

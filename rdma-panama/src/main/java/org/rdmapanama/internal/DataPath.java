package org.rdmapanama.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.MutableCallSite;
import java.lang.reflect.UndeclaredThrowableException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The inline verbs. {@code ibv_post_send}, {@code ibv_post_recv},
 * {@code ibv_post_srq_recv}, {@code ibv_poll_cq} and {@code ibv_req_notify_cq}
 * are {@code static inline} in verbs.h: they jump through
 * {@code context->ops}, so there is no symbol to link. Each handle here takes
 * the function pointer as its first argument; contexts read the pointers once.
 * <p>
 * They are linked {@code critical}: each is a short provider call that never
 * calls back into Java (a doorbell write or at most one short syscall), so the
 * thread-state transition is pure overhead. {@code -Drdma.critical=false}
 * turns that off for comparison.
 */
public final class DataPath {
    private DataPath() {}

    private static final Linker.Option[] OPTIONS = Boolean.parseBoolean(System.getProperty("rdma.critical", "true"))
            ? new Linker.Option[] {Linker.Option.critical(false)}
            : new Linker.Option[0];

    private static MethodHandle link(FunctionDescriptor fd) {
        return Link.unbound(fd, OPTIONS);
    }

    private static final MethodHandle POLL_CQ = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle REQ_NOTIFY_CQ = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    /** {@code int post_send(qp, wr, bad_wr)}; also post_recv, post_srq_recv. */
    private static final MethodHandle POST = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    // The same calls with the pointers as plain longs (the same registers in the
    // SysV and AAPCS64 ABIs): no scope to acquire or check. Only for callers
    // whose memory stays alive by other means (a thread-confined poller or poster).
    private static final MethodHandle POLL_CQ_AT = link(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));
    private static final MethodHandle POST_AT = link(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    // The confined path's calls once more, each bound to one provider's function: the first a
    // process uses (a process normally has one provider). An unbound downcall checks the segment
    // that carries its target on every call; bound through a MutableCallSite, the target is a
    // constant the JIT folds those checks into (JMH nativeCall against nativeCallBound). A second
    // provider's contexts keep the unbound handles; binding is once per site, never rebound.
    private static final MutableCallSite POLL_CQ_SITE = unboundSite(POLL_CQ_AT);
    private static final MutableCallSite POST_SEND_SITE = unboundSite(POST_AT);
    private static final MutableCallSite POST_RECV_SITE = unboundSite(POST_AT);
    private static final MethodHandle POLL_CQ_BOUND = POLL_CQ_SITE.dynamicInvoker();
    private static final MethodHandle POST_SEND_BOUND = POST_SEND_SITE.dynamicInvoker();
    private static final MethodHandle POST_RECV_BOUND = POST_RECV_SITE.dynamicInvoker();
    private static long pollCqBoundTo, postSendBoundTo, postRecvBoundTo; // guarded by DataPath.class; 0: unbound

    private static MutableCallSite unboundSite(MethodHandle unbound) {
        MethodType type = unbound.type().dropParameterTypes(0, 1);
        MethodHandle refuse = MethodHandles.dropArguments(MethodHandles.throwException(type.returnType(),
                IllegalStateException.class).bindTo(new IllegalStateException("a data-path call site used before "
                + "it was bound")), 0, type.parameterList());
        return new MutableCallSite(refuse);
    }

    /** {@code -Drdma.bindCalls=false}: every call through the unbound handles, for comparison. */
    private static final boolean BIND_CALLS = Boolean.parseBoolean(System.getProperty("rdma.bindCalls", "true"));

    private static long bind(MutableCallSite site, MethodHandle unbound, long boundTo, MemorySegment fn) {
        if (BIND_CALLS && boundTo == 0 && fn.address() != 0) {
            // A global segment of its own: the call site outlives the context fn was read from.
            site.setTarget(unbound.bindTo(MemorySegment.ofAddress(fn.address())));
            MutableCallSite.syncAll(new MutableCallSite[] {site});
            return fn.address();
        }
        return boundTo;
    }

    /** Binds {@link #pollCqBound} to {@code fn} unless it is bound already; whether it is bound to {@code fn}. */
    public static synchronized boolean bindPollCq(MemorySegment fn) {
        pollCqBoundTo = bind(POLL_CQ_SITE, POLL_CQ_AT, pollCqBoundTo, fn);
        return pollCqBoundTo != 0 && pollCqBoundTo == fn.address();
    }

    /** {@link #bindPollCq} for {@link #postSendBound}. */
    public static synchronized boolean bindPostSend(MemorySegment fn) {
        postSendBoundTo = bind(POST_SEND_SITE, POST_AT, postSendBoundTo, fn);
        return postSendBoundTo != 0 && postSendBoundTo == fn.address();
    }

    /** {@link #bindPollCq} for {@link #postRecvBound}. */
    public static synchronized boolean bindPostRecv(MemorySegment fn) {
        postRecvBoundTo = bind(POST_RECV_SITE, POST_AT, postRecvBoundTo, fn);
        return postRecvBoundTo != 0 && postRecvBoundTo == fn.address();
    }

    // The wrappers below are static and the handles static final, so the JIT
    // inlines them into the caller: no cost over an invokeExact at the call site.
    // Each returns >= 0 or -errno; the posts and req_notify return the errno value
    // (some providers -errno), which Errno.ofStatus turns around in a register.
    // A closed segment's IllegalStateException passes through for the caller to translate.

    /** {@code int poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}: the count, or -errno. */
    public static int pollCq(MemorySegment fn, MemorySegment cq, int entries, MemorySegment wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, entries, wc);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@code int req_notify_cq(struct ibv_cq *cq, int solicited_only)}: 0 or -errno. */
    public static int reqNotifyCq(MemorySegment fn, MemorySegment cq, boolean solicitedOnly) {
        try {
            return Errno.ofStatus((int) REQ_NOTIFY_CQ.invokeExact(fn, cq, solicitedOnly ? 1 : 0));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@code post_send}, {@code post_recv} or {@code post_srq_recv} through {@code fn}: 0 or -errno. */
    public static int post(MemorySegment fn, MemorySegment queue, MemorySegment wr, MemorySegment badWr) {
        try {
            return Errno.ofStatus((int) POST.invokeExact(fn, queue, wr, badWr));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /**
     * {@link #pollCq} with the CQ and the completion array by address. The
     * caller guarantees both stay allocated for the whole call.
     */
    public static int pollCqAt(MemorySegment fn, long cq, int entries, long wc) {
        try {
            return (int) POLL_CQ_AT.invokeExact(fn, cq, entries, wc);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@link #post} with the queue, the WR chain and bad_wr by address; the caller guarantees their lifetime. */
    public static int postAt(MemorySegment fn, long queue, long wr, long badWr) {
        try {
            return Errno.ofStatus((int) POST_AT.invokeExact(fn, queue, wr, badWr));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@link #pollCqAt} through the function {@link #bindPollCq} returned true for. */
    public static int pollCqBound(long cq, int entries, long wc) {
        try {
            return (int) POLL_CQ_BOUND.invokeExact(cq, entries, wc);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@link #postAt} through the post_send {@link #bindPostSend} returned true for. */
    public static int postSendBound(long qp, long wr, long badWr) {
        try {
            return Errno.ofStatus((int) POST_SEND_BOUND.invokeExact(qp, wr, badWr));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }

    /** {@link #postAt} through the post_recv {@link #bindPostRecv} returned true for. */
    public static int postRecvBound(long qp, long wr, long badWr) {
        try {
            return Errno.ofStatus((int) POST_RECV_BOUND.invokeExact(qp, wr, badWr));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UndeclaredThrowableException(t);
        }
    }
}

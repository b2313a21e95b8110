package org.rdmapanama.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

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
        return Linker.nativeLinker().downcallHandle(fd, OPTIONS);
    }

    /** {@code int poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}. */
    public static final MethodHandle POLL_CQ = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));

    /** {@code int req_notify_cq(struct ibv_cq *cq, int solicited_only)}. */
    public static final MethodHandle REQ_NOTIFY_CQ = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    /** {@code int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)}; also post_recv, post_srq_recv. */
    public static final MethodHandle POST = link(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
}

package org.rdmapanama.internal;

import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_ah_attr;
import org.rdmapanama.ffi.ibv_global_route;
import org.rdmapanama.ffi.ibv_qp;
import org.rdmapanama.ffi.ibv_qp_attr;
import org.rdmapanama.ffi.ibv_qp_cap;
import org.rdmapanama.ffi.ibv_qp_init_attr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_qp}, {@code ibv_qp_attr} (with its {@code ibv_ah_attr} and
 * {@code ibv_global_route}), {@code ibv_qp_init_attr} and {@code ibv_qp_cap}:
 * the control path's QP structs, one static method a field.
 */
public final class QpAttributes {
    private QpAttributes() {}

    public static final long QP_SIZE = ibv_qp.sizeof();

    public static final int STATE = Rdma.IBV_QP_STATE();
    public static final int ACCESS_FLAGS = Rdma.IBV_QP_ACCESS_FLAGS();
    public static final int PKEY_INDEX = Rdma.IBV_QP_PKEY_INDEX();
    public static final int PORT = Rdma.IBV_QP_PORT();
    public static final int QKEY = Rdma.IBV_QP_QKEY();
    public static final int AV = Rdma.IBV_QP_AV();
    public static final int PATH_MTU = Rdma.IBV_QP_PATH_MTU();
    public static final int TIMEOUT = Rdma.IBV_QP_TIMEOUT();
    public static final int RETRY_CNT = Rdma.IBV_QP_RETRY_CNT();
    public static final int RNR_RETRY = Rdma.IBV_QP_RNR_RETRY();
    public static final int RQ_PSN = Rdma.IBV_QP_RQ_PSN();
    public static final int MAX_QP_RD_ATOMIC = Rdma.IBV_QP_MAX_QP_RD_ATOMIC();
    public static final int MIN_RNR_TIMER = Rdma.IBV_QP_MIN_RNR_TIMER();
    public static final int SQ_PSN = Rdma.IBV_QP_SQ_PSN();
    public static final int MAX_DEST_RD_ATOMIC = Rdma.IBV_QP_MAX_DEST_RD_ATOMIC();
    public static final int DEST_QPN = Rdma.IBV_QP_DEST_QPN();

    /** The QP number of an {@code ibv_qp*}. */
    public static int qpNumber(MemorySegment qp) {
        return ibv_qp.qp_num(qp.reinterpret(QP_SIZE));
    }

    // --- struct ibv_qp_attr ---

    public static MemorySegment allocateAttr(Arena arena) {
        return arena.allocate(ibv_qp_attr.layout());
    }

    public static int state(MemorySegment attr) {
        return ibv_qp_attr.qp_state(attr);
    }

    public static void state(MemorySegment attr, int state) {
        ibv_qp_attr.qp_state(attr, state);
    }

    public static void pkeyIndex(MemorySegment attr, int index) {
        ibv_qp_attr.pkey_index(attr, (short) index);
    }

    public static void port(MemorySegment attr, int port) {
        ibv_qp_attr.port_num(attr, (byte) port);
    }

    public static void qkey(MemorySegment attr, int qkey) {
        ibv_qp_attr.qkey(attr, qkey);
    }

    public static void accessFlags(MemorySegment attr, int flags) {
        ibv_qp_attr.qp_access_flags(attr, flags);
    }

    public static void pathMtu(MemorySegment attr, int mtuEnum) {
        ibv_qp_attr.path_mtu(attr, mtuEnum);
    }

    public static void destQpNumber(MemorySegment attr, int qpn) {
        ibv_qp_attr.dest_qp_num(attr, qpn);
    }

    public static void rqPsn(MemorySegment attr, int psn) {
        ibv_qp_attr.rq_psn(attr, psn);
    }

    public static void sqPsn(MemorySegment attr, int psn) {
        ibv_qp_attr.sq_psn(attr, psn);
    }

    public static void maxDestRdAtomic(MemorySegment attr, int n) {
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) n);
    }

    public static void maxRdAtomic(MemorySegment attr, int n) {
        ibv_qp_attr.max_rd_atomic(attr, (byte) n);
    }

    public static void minRnrTimer(MemorySegment attr, int timer) {
        ibv_qp_attr.min_rnr_timer(attr, (byte) timer);
    }

    public static void timeout(MemorySegment attr, int timeout) {
        ibv_qp_attr.timeout(attr, (byte) timeout);
    }

    public static void retryCount(MemorySegment attr, int count) {
        ibv_qp_attr.retry_cnt(attr, (byte) count);
    }

    public static void rnrRetry(MemorySegment attr, int count) {
        ibv_qp_attr.rnr_retry(attr, (byte) count);
    }

    /** The attr's {@code ah_attr}, a slice for {@link #fillAddress}. */
    public static MemorySegment addressOf(MemorySegment attr) {
        return ibv_qp_attr.ah_attr(attr);
    }

    // --- struct ibv_ah_attr ---

    public static MemorySegment allocateAddress(Arena arena) {
        return arena.allocate(ibv_ah_attr.layout());
    }

    /** An {@code ibv_ah_attr} to LID {@code dlid}, plus a GRH to {@code dgid} from {@code sgidIndex} if it is {@code >= 0}. */
    public static void fillAddress(MemorySegment ah, int dlid, int port, byte[] dgid, int sgidIndex, int hopLimit) {
        ibv_ah_attr.dlid(ah, (short) dlid);
        ibv_ah_attr.sl(ah, (byte) 0);
        ibv_ah_attr.src_path_bits(ah, (byte) 0);
        ibv_ah_attr.port_num(ah, (byte) port);
        if (sgidIndex >= 0) {
            ibv_ah_attr.is_global(ah, (byte) 1);
            MemorySegment grh = ibv_ah_attr.grh(ah);
            ibv_global_route.dgid(grh).copyFrom(MemorySegment.ofArray(dgid));
            ibv_global_route.sgid_index(grh, (byte) sgidIndex);
            ibv_global_route.hop_limit(grh, (byte) hopLimit);
        }
    }

    // --- struct ibv_qp_init_attr ---

    public static MemorySegment allocateInit(Arena arena) {
        return arena.allocate(ibv_qp_init_attr.layout());
    }

    /** Zeroes {@code attr} and fills it; {@code srq} may be NULL. */
    public static void fillInit(MemorySegment attr, MemorySegment sendCq, MemorySegment recvCq, MemorySegment srq,
                                int qpType, boolean signalAll, int maxSendWr, int maxRecvWr, int maxSendSge,
                                int maxRecvSge, int maxInlineData) {
        attr.fill((byte) 0);
        ibv_qp_init_attr.send_cq(attr, sendCq);
        ibv_qp_init_attr.recv_cq(attr, recvCq);
        ibv_qp_init_attr.srq(attr, srq);
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, maxSendWr);
        ibv_qp_cap.max_recv_wr(cap, maxRecvWr);
        ibv_qp_cap.max_send_sge(cap, maxSendSge);
        ibv_qp_cap.max_recv_sge(cap, maxRecvSge);
        ibv_qp_cap.max_inline_data(cap, maxInlineData);
        ibv_qp_init_attr.qp_type(attr, qpType);
        ibv_qp_init_attr.sq_sig_all(attr, signalAll ? 1 : 0);
    }

    /** The inline size the provider granted, written back into the init attr by create. */
    public static int grantedInline(MemorySegment initAttr) {
        return ibv_qp_cap.max_inline_data(ibv_qp_init_attr.cap(initAttr));
    }
}

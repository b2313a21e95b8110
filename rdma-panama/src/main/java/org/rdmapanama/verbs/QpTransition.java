package org.rdmapanama.verbs;

import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_ah_attr;
import org.rdmapanama.ffi.ibv_global_route;
import org.rdmapanama.ffi.ibv_qp_attr;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * The {@code struct ibv_qp_attr} and attribute mask of each state change,
 * as rc_pingpong's {@code pp_connect_ctx} builds them, one method a step.
 * Each fills a zeroed attr and returns the mask for {@code ibv_modify_qp}.
 */
final class QpTransition {
    private QpTransition() {}

    /** RNR NAK timer 12: the responder asks for a 0.64 ms pause (IBA table 45), perftest's value. */
    static final byte MIN_RNR_TIMER_0_64_MS = 12;
    /** Local ACK timeout 14: 4.096 µs × 2^14 ≈ 67 ms before a retry, perftest's value. */
    static final byte ACK_TIMEOUT_67_MS = 14;
    /** Retries after a timeout, and after an RNR NAK: 7 is the largest; for RNR it means "forever". */
    static final byte RETRY_MAX = 7;
    /** Hop limit of a GRH: the peer is on the same subnet. */
    static final byte HOP_LIMIT_SUBNET = 1;

    static final int STATE = Rdma.IBV_QP_STATE();
    static final int ACCESS_FLAGS = Rdma.IBV_QP_ACCESS_FLAGS();
    static final int PKEY_INDEX = Rdma.IBV_QP_PKEY_INDEX();
    static final int PORT = Rdma.IBV_QP_PORT();
    static final int QKEY = Rdma.IBV_QP_QKEY();
    static final int AV = Rdma.IBV_QP_AV();
    static final int PATH_MTU = Rdma.IBV_QP_PATH_MTU();
    static final int TIMEOUT = Rdma.IBV_QP_TIMEOUT();
    static final int RETRY_CNT = Rdma.IBV_QP_RETRY_CNT();
    static final int RNR_RETRY = Rdma.IBV_QP_RNR_RETRY();
    static final int RQ_PSN = Rdma.IBV_QP_RQ_PSN();
    static final int MAX_QP_RD_ATOMIC = Rdma.IBV_QP_MAX_QP_RD_ATOMIC();
    static final int MIN_RNR_TIMER = Rdma.IBV_QP_MIN_RNR_TIMER();
    static final int SQ_PSN = Rdma.IBV_QP_SQ_PSN();
    static final int MAX_DEST_RD_ATOMIC = Rdma.IBV_QP_MAX_DEST_RD_ATOMIC();
    static final int DEST_QPN = Rdma.IBV_QP_DEST_QPN();

    static int init(MemorySegment attr, QueuePairType type, int port, Access... remoteAccess) {
        ibv_qp_attr.qp_state(attr, QpState.INIT.ordinal());
        ibv_qp_attr.pkey_index(attr, (short) 0);
        ibv_qp_attr.port_num(attr, (byte) port);
        int mask = STATE | PKEY_INDEX | PORT;
        if (type == QueuePairType.UD) {
            ibv_qp_attr.qkey(attr, QueuePair.DEFAULT_QKEY);
            return mask | QKEY;
        }
        Set<Access> set = remoteAccess.length == 0 ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(Set.of(remoteAccess));
        set.remove(Access.LOCAL_WRITE); // a QP's access flags are what the peer may do
        ibv_qp_attr.qp_access_flags(attr, Access.mask(set) & ~Access.LOCAL_WRITE.bit); // mask() adds it back
        return mask | ACCESS_FLAGS;
    }

    /** The path MTU enum for {@code mtuBytes}: IBV_MTU_256 is 1 ... IBV_MTU_4096 is 5. */
    static int mtuEnum(int mtuBytes) {
        int mtuEnum = Integer.numberOfTrailingZeros(mtuBytes) - 7;
        if (Integer.bitCount(mtuBytes) != 1 || mtuEnum < 1 || mtuEnum > 5) {
            throw new IllegalArgumentException("path MTU must be 256, 512, 1024, 2048 or 4096, got " + mtuBytes);
        }
        return mtuEnum;
    }

    static int rtr(MemorySegment attr, QueuePairType type, QpAddress remote, int port, int gidIndex, int mtuBytes,
                   int maxDestRdAtomic) {
        ibv_qp_attr.qp_state(attr, QpState.RTR.ordinal());
        if (type != QueuePairType.RC) {
            return STATE;
        }
        ibv_qp_attr.path_mtu(attr, mtuEnum(mtuBytes));
        ibv_qp_attr.dest_qp_num(attr, remote.qpn());
        ibv_qp_attr.rq_psn(attr, remote.psn());
        ibv_qp_attr.max_dest_rd_atomic(attr, (byte) Math.min(255, Math.max(1, maxDestRdAtomic)));
        ibv_qp_attr.min_rnr_timer(attr, MIN_RNR_TIMER_0_64_MS);
        fillAddress(ibv_qp_attr.ah_attr(attr), remote, port, gidIndex);
        return STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    }

    static int rts(MemorySegment attr, QueuePairType type, int psn, int maxRdAtomic) {
        ibv_qp_attr.qp_state(attr, QpState.RTS.ordinal());
        ibv_qp_attr.sq_psn(attr, psn & 0xffffff);
        int mask = STATE | SQ_PSN;
        if (type != QueuePairType.RC) {
            return mask;
        }
        ibv_qp_attr.timeout(attr, ACK_TIMEOUT_67_MS);
        ibv_qp_attr.retry_cnt(attr, RETRY_MAX);
        ibv_qp_attr.rnr_retry(attr, RETRY_MAX);
        ibv_qp_attr.max_rd_atomic(attr, (byte) Math.min(255, Math.max(1, maxRdAtomic)));
        return mask | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC;
    }

    /** Just the state: ERR (flushes outstanding WRs) or RESET. */
    static int state(MemorySegment attr, QpState state) {
        ibv_qp_attr.qp_state(attr, state.ordinal());
        return STATE;
    }

    /** {@code struct ibv_ah_attr} toward {@code remote}: by LID, plus a GRH from {@code gidIndex} if it is {@code >= 0}. */
    static void fillAddress(MemorySegment ah, QpAddress remote, int port, int gidIndex) {
        ibv_ah_attr.dlid(ah, (short) remote.lid());
        ibv_ah_attr.sl(ah, (byte) 0);
        ibv_ah_attr.src_path_bits(ah, (byte) 0);
        ibv_ah_attr.port_num(ah, (byte) port);
        if (gidIndex >= 0) {
            ibv_ah_attr.is_global(ah, (byte) 1);
            MemorySegment grh = ibv_ah_attr.grh(ah);
            ibv_global_route.dgid(grh).copyFrom(MemorySegment.ofArray(remote.gid()));
            ibv_global_route.sgid_index(grh, (byte) gidIndex);
            ibv_global_route.hop_limit(grh, HOP_LIMIT_SUBNET);
        }
    }
}

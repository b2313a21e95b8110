package org.rdmapanama.verbs;

import org.rdmapanama.internal.QpAttributes;

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

    static final int STATE = QpAttributes.STATE;
    static final int ACCESS_FLAGS = QpAttributes.ACCESS_FLAGS;
    static final int PKEY_INDEX = QpAttributes.PKEY_INDEX;
    static final int PORT = QpAttributes.PORT;
    static final int QKEY = QpAttributes.QKEY;
    static final int AV = QpAttributes.AV;
    static final int PATH_MTU = QpAttributes.PATH_MTU;
    static final int TIMEOUT = QpAttributes.TIMEOUT;
    static final int RETRY_CNT = QpAttributes.RETRY_CNT;
    static final int RNR_RETRY = QpAttributes.RNR_RETRY;
    static final int RQ_PSN = QpAttributes.RQ_PSN;
    static final int MAX_QP_RD_ATOMIC = QpAttributes.MAX_QP_RD_ATOMIC;
    static final int MIN_RNR_TIMER = QpAttributes.MIN_RNR_TIMER;
    static final int SQ_PSN = QpAttributes.SQ_PSN;
    static final int MAX_DEST_RD_ATOMIC = QpAttributes.MAX_DEST_RD_ATOMIC;
    static final int DEST_QPN = QpAttributes.DEST_QPN;

    static int init(MemorySegment attr, QueuePairType type, int port, Access... remoteAccess) {
        QpAttributes.state(attr, QpState.INIT.ordinal());
        QpAttributes.pkeyIndex(attr, (short) 0);
        QpAttributes.port(attr, (byte) port);
        int mask = STATE | PKEY_INDEX | PORT;
        if (type == QueuePairType.UD) {
            QpAttributes.qkey(attr, QueuePair.DEFAULT_QKEY);
            return mask | QKEY;
        }
        Set<Access> set = remoteAccess.length == 0 ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(Set.of(remoteAccess));
        set.remove(Access.LOCAL_WRITE); // a QP's access flags are what the peer may do
        QpAttributes.accessFlags(attr, Access.mask(set) & ~Access.LOCAL_WRITE.bit); // mask() adds it back
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
        QpAttributes.state(attr, QpState.RTR.ordinal());
        if (type != QueuePairType.RC) {
            return STATE;
        }
        QpAttributes.pathMtu(attr, mtuEnum(mtuBytes));
        QpAttributes.destQpNumber(attr, remote.qpn());
        QpAttributes.rqPsn(attr, remote.psn());
        QpAttributes.maxDestRdAtomic(attr, Math.min(255, Math.max(1, maxDestRdAtomic)));
        QpAttributes.minRnrTimer(attr, MIN_RNR_TIMER_0_64_MS);
        fillAddress(QpAttributes.addressOf(attr), remote, port, gidIndex);
        return STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    }

    static int rts(MemorySegment attr, QueuePairType type, int psn, int maxRdAtomic) {
        QpAttributes.state(attr, QpState.RTS.ordinal());
        QpAttributes.sqPsn(attr, psn & 0xffffff);
        int mask = STATE | SQ_PSN;
        if (type != QueuePairType.RC) {
            return mask;
        }
        QpAttributes.timeout(attr, ACK_TIMEOUT_67_MS);
        QpAttributes.retryCount(attr, RETRY_MAX);
        QpAttributes.rnrRetry(attr, RETRY_MAX);
        QpAttributes.maxRdAtomic(attr, Math.min(255, Math.max(1, maxRdAtomic)));
        return mask | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC;
    }

    /** Just the state: ERR (flushes outstanding WRs) or RESET. */
    static int state(MemorySegment attr, QpState state) {
        QpAttributes.state(attr, state.ordinal());
        return STATE;
    }

    /** {@code struct ibv_ah_attr} toward {@code remote}: by LID, plus a GRH from {@code gidIndex} if it is {@code >= 0}. */
    static void fillAddress(MemorySegment ah, QpAddress remote, int port, int gidIndex) {
        QpAttributes.fillAddress(ah, remote.lid(), port, remote.gid(), gidIndex, HOP_LIMIT_SUBNET);
    }
}

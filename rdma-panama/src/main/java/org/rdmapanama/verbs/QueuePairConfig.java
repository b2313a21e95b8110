package org.rdmapanama.verbs;

import java.util.Objects;

/**
 * What {@link ProtectionDomain#createQueuePair} builds. Defaults: RC, 128
 * send and receive WRs, 1 SGE each, no inline data, every send signaled.
 *
 * @param type          RC or UD
 * @param sendCq        where send completions go
 * @param recvCq        where receive completions go (may be the send CQ)
 * @param srq           a shared receive queue, or null for the QP's own
 * @param maxSendWr     send queue depth
 * @param maxRecvWr     receive queue depth (ignored with an SRQ)
 * @param maxSendSge    scatter/gather entries per send WR
 * @param maxRecvSge    scatter/gather entries per receive WR
 * @param maxInlineData bytes a send may carry inline (copied at post time; no lkey needed)
 * @param signalAll     true: every send completes on the CQ; false: only those flagged signaled
 */
public record QueuePairConfig(QueuePairType type, CompletionQueue sendCq, CompletionQueue recvCq,
                              SharedReceiveQueue srq, int maxSendWr, int maxRecvWr, int maxSendSge,
                              int maxRecvSge, int maxInlineData, boolean signalAll) {
    public QueuePairConfig {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        positive("maxSendWr", maxSendWr);
        positive("maxSendSge", maxSendSge);
        if (srq == null) {
            positive("maxRecvWr", maxRecvWr);
            positive("maxRecvSge", maxRecvSge);
        }
        if (maxInlineData < 0) {
            throw new IllegalArgumentException("maxInlineData must be >= 0, got " + maxInlineData);
        }
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, got " + value);
        }
    }

    /**
     * An RC QP on one CQ with the defaults: one SGE each way, no inline data,
     * every send signaled, and queues as deep as the CQ can hold for both
     * (half its entries each, at most 128).
     */
    public static QueuePairConfig rc(CompletionQueue cq) {
        return new QueuePairConfig(QueuePairType.RC, cq, cq, null, defaultDepth(cq), defaultDepth(cq), 1, 1, 0, true);
    }

    /** A UD QP on one CQ with the defaults of {@link #rc}. */
    public static QueuePairConfig ud(CompletionQueue cq) {
        return new QueuePairConfig(QueuePairType.UD, cq, cq, null, defaultDepth(cq), defaultDepth(cq), 1, 1, 0, true);
    }

    private static int defaultDepth(CompletionQueue cq) {
        return Math.clamp(cq.size() / 2, 1, 128);
    }

    public QueuePairConfig withQueueDepth(int sendWr, int recvWr) {
        return new QueuePairConfig(type, sendCq, recvCq, srq, sendWr, recvWr, maxSendSge, maxRecvSge, maxInlineData, signalAll);
    }

    public QueuePairConfig withSge(int sendSge, int recvSge) {
        return new QueuePairConfig(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, sendSge, recvSge, maxInlineData, signalAll);
    }

    public QueuePairConfig withInline(int bytes) {
        return new QueuePairConfig(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, bytes, signalAll);
    }

    public QueuePairConfig withSignalAll(boolean all) {
        return new QueuePairConfig(type, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, all);
    }

    public QueuePairConfig withSrq(SharedReceiveQueue sharedReceiveQueue) {
        return new QueuePairConfig(type, sendCq, recvCq, sharedReceiveQueue, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData, signalAll);
    }
}

package org.rdmapanama.verbs;

import java.util.Objects;

/**
 * What {@link ProtectionDomain#createQueuePair} builds. Defaults: RC, 128
 * send and receive WRs, 1 SGE each, no inline data, every send signaled.
 *
 * @param type   RC or UD
 * @param sendCq where send completions go
 * @param recvCq where receive completions go (may be the send CQ)
 * @param srq    a shared receive queue, or null for the QP's own
 * @param caps   the queues' depths and SGEs, inline size and signaling
 */
public record QueuePairConfig(QueuePairType type, CompletionQueue sendCq, CompletionQueue recvCq,
                              SharedReceiveQueue srq, QueuePairCaps caps) {
    public QueuePairConfig {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        Objects.requireNonNull(caps, "caps");
    }

    /**
     * An RC QP on one CQ with the defaults: one SGE each way, no inline data,
     * every send signaled, and queues as deep as the CQ can hold for both
     * (half its entries each, at most 128).
     */
    public static QueuePairConfig rc(CompletionQueue cq) {
        return new QueuePairConfig(QueuePairType.RC, cq, cq, null, QueuePairCaps.of(defaultDepth(cq)));
    }

    /** A UD QP on one CQ with the defaults of {@link #rc}. */
    public static QueuePairConfig ud(CompletionQueue cq) {
        return new QueuePairConfig(QueuePairType.UD, cq, cq, null, QueuePairCaps.of(defaultDepth(cq)));
    }

    private static int defaultDepth(CompletionQueue cq) {
        return Math.clamp(cq.size() / 2, 1, 128);
    }

    public int maxSendWr() {
        return caps.sendWr();
    }

    public int maxRecvWr() {
        return caps.recvWr();
    }

    public int maxSendSge() {
        return caps.sendSge();
    }

    public int maxRecvSge() {
        return caps.recvSge();
    }

    public int maxInlineData() {
        return caps.inlineData();
    }

    public boolean signalAll() {
        return caps.signalAll();
    }

    public QueuePairConfig withCaps(QueuePairCaps newCaps) {
        return new QueuePairConfig(type, sendCq, recvCq, srq, newCaps);
    }

    public QueuePairConfig withQueueDepth(int sendWr, int recvWr) {
        return withCaps(caps.withDepth(sendWr, recvWr));
    }

    public QueuePairConfig withSge(int sendSge, int recvSge) {
        return withCaps(caps.withSge(sendSge, recvSge));
    }

    public QueuePairConfig withInline(int bytes) {
        return withCaps(caps.withInline(bytes));
    }

    public QueuePairConfig withSignalAll(boolean all) {
        return withCaps(caps.withSignalAll(all));
    }

    public QueuePairConfig withSrq(SharedReceiveQueue sharedReceiveQueue) {
        return new QueuePairConfig(type, sendCq, recvCq, sharedReceiveQueue, caps);
    }
}

package org.rdmapanama.cm;

import org.rdmapanama.verbs.QueuePairCaps;

/**
 * The queue pair and connection parameters of an {@link RdmaConnection}.
 *
 * @param caps          the queue pair's queues, SGEs, inline size and signaling
 * @param cqSize        completion queue size (shared by sends and receives)
 * @param rdmaReadDepth outstanding RDMA Reads/atomics in each direction (responder_resources, initiator_depth)
 * @param retryCount    transport retries before an error completion (0..7)
 * @param rnrRetryCount receiver-not-ready retries (0..7; 7 means forever)
 * @param ackTimeout    the local ACK timeout, 4.096 µs &times; 2^ackTimeout, before a retry (1..31, set with
 *                      {@code RDMA_OPTION_ID_ACK_TIMEOUT}); 0: rdma_cm's choice (about 2 s a retry on rxe)
 */
public record ConnectionOptions(QueuePairCaps caps, int cqSize, int rdmaReadDepth, int retryCount,
                                int rnrRetryCount, int ackTimeout) {
    public ConnectionOptions {
        java.util.Objects.requireNonNull(caps, "caps");
        check("cqSize", cqSize, 1, Integer.MAX_VALUE);
        check("rdmaReadDepth", rdmaReadDepth, 0, 255);
        check("retryCount", retryCount, 0, 7);
        check("rnrRetryCount", rnrRetryCount, 0, 7);
        check("ackTimeout", ackTimeout, 0, 31);
        // One CQ takes both queues' completions: smaller, and they would be lost silently.
        if ((long) caps.sendWr() + caps.recvWr() > cqSize) {
            throw new IllegalArgumentException("cqSize " + cqSize + " cannot hold sendDepth " + caps.sendWr()
                    + " + recvDepth " + caps.recvWr() + " completions; completions beyond it would be lost");
        }
    }

    /** rdma_cm's ACK timeout. */
    public ConnectionOptions(QueuePairCaps caps, int cqSize, int rdmaReadDepth, int retryCount, int rnrRetryCount) {
        this(caps, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, 0);
    }

    public ConnectionOptions(int sendDepth, int recvDepth, int sendSge, int recvSge, int inlineData,
                             int cqSize, int rdmaReadDepth, int retryCount, int rnrRetryCount, boolean signalAll) {
        this(new QueuePairCaps(sendDepth, recvDepth, sendSge, recvSge, inlineData, signalAll), cqSize, rdmaReadDepth,
                retryCount, rnrRetryCount);
    }

    /** Every send signaled. */
    public ConnectionOptions(int sendDepth, int recvDepth, int sendSge, int recvSge, int inlineData,
                             int cqSize, int rdmaReadDepth, int retryCount, int rnrRetryCount) {
        this(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, true);
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", got " + v);
        }
    }

    /** 64 WRs each way on a 256-entry CQ, one SGE, one outstanding Read, 7 retries of each kind. */
    public static ConnectionOptions defaults() {
        return new ConnectionOptions(QueuePairCaps.of(64), 256, 1, 7, 7);
    }

    public int sendDepth() {
        return caps.sendWr();
    }

    public int recvDepth() {
        return caps.recvWr();
    }

    public int sendSge() {
        return caps.sendSge();
    }

    public int recvSge() {
        return caps.recvSge();
    }

    public int inlineData() {
        return caps.inlineData();
    }

    public boolean signalAll() {
        return caps.signalAll();
    }

    public ConnectionOptions withCaps(QueuePairCaps newCaps) {
        return new ConnectionOptions(newCaps, cqSize, rdmaReadDepth, retryCount, rnrRetryCount);
    }

    /** Both queues' depths; the CQ grows to hold them. */
    public ConnectionOptions withDepth(int send, int recv) {
        return new ConnectionOptions(caps.withDepth(send, recv), Math.max(cqSize, send + recv), rdmaReadDepth,
                retryCount, rnrRetryCount);
    }

    public ConnectionOptions withSge(int send, int recv) {
        return withCaps(caps.withSge(send, recv));
    }

    public ConnectionOptions withInline(int bytes) {
        return withCaps(caps.withInline(bytes));
    }

    public ConnectionOptions withSignalAll(boolean all) {
        return withCaps(caps.withSignalAll(all));
    }

    /** Outstanding RDMA Reads/atomics each way (responder_resources, initiator_depth). */
    public ConnectionOptions withRdmaReadDepth(int depth) {
        return new ConnectionOptions(caps, cqSize, depth, retryCount, rnrRetryCount);
    }

    /**
     * Transport retries before IBV_WC_RETRY_EXC_ERR (0..7). rxe takes 7 to mean
     * "retry forever", as 7 means for RNR retries, so a QP on a dead link
     * reports nothing there; 6 or less makes the failure show.
     */
    public ConnectionOptions withRetry(int count) {
        return new ConnectionOptions(caps, cqSize, rdmaReadDepth, count, rnrRetryCount);
    }

    public ConnectionOptions withRnrRetry(int count) {
        return new ConnectionOptions(caps, cqSize, rdmaReadDepth, retryCount, count);
    }
}

package org.rdmapanama.cm;

/**
 * The queue pair and connection parameters of an {@link RdmaConnection}.
 *
 * @param sendDepth          send queue depth
 * @param recvDepth          receive queue depth
 * @param sendSge            SGEs per send WR
 * @param recvSge            SGEs per receive WR
 * @param inlineData         inline bytes per send
 * @param cqSize             completion queue size (shared by sends and receives)
 * @param rdmaReadDepth      outstanding RDMA Reads/atomics in each direction (responder_resources, initiator_depth)
 * @param retryCount         transport retries before an error completion (0..7)
 * @param rnrRetryCount      receiver-not-ready retries (0..7; 7 means forever)
 * @param signalAll          every send completes on the CQ (false: only those flagged signaled)
 */
public record ConnectionOptions(int sendDepth, int recvDepth, int sendSge, int recvSge, int inlineData,
                                int cqSize, int rdmaReadDepth, int retryCount, int rnrRetryCount,
                                boolean signalAll) {
    public ConnectionOptions {
        check("sendDepth", sendDepth, 1, Integer.MAX_VALUE);
        check("recvDepth", recvDepth, 1, Integer.MAX_VALUE);
        check("sendSge", sendSge, 1, 1024);
        check("recvSge", recvSge, 1, 1024);
        check("inlineData", inlineData, 0, 1 << 20);
        check("cqSize", cqSize, 1, Integer.MAX_VALUE);
        check("rdmaReadDepth", rdmaReadDepth, 0, 255);
        check("retryCount", retryCount, 0, 7);
        check("rnrRetryCount", rnrRetryCount, 0, 7);
        // One CQ takes both queues' completions: smaller, and they would be lost silently.
        if ((long) sendDepth + recvDepth > cqSize) {
            throw new IllegalArgumentException("cqSize " + cqSize + " cannot hold sendDepth " + sendDepth
                    + " + recvDepth " + recvDepth + " completions; completions beyond it would be lost");
        }
    }

    /** Every send signaled, as before {@code signalAll} existed. */
    public ConnectionOptions(int sendDepth, int recvDepth, int sendSge, int recvSge, int inlineData,
                             int cqSize, int rdmaReadDepth, int retryCount, int rnrRetryCount) {
        this(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, true);
    }

    private static void check(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", got " + v);
        }
    }

    public static ConnectionOptions defaults() {
        return new ConnectionOptions(64, 64, 1, 1, 0, 256, 1, 7, 7, true);
    }

    public ConnectionOptions withDepth(int send, int recv) {
        return new ConnectionOptions(send, recv, sendSge, recvSge, inlineData, Math.max(cqSize, send + recv),
                rdmaReadDepth, retryCount, rnrRetryCount, signalAll);
    }

    public ConnectionOptions withSge(int send, int recv) {
        return new ConnectionOptions(sendDepth, recvDepth, send, recv, inlineData, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, signalAll);
    }

    public ConnectionOptions withInline(int bytes) {
        return new ConnectionOptions(sendDepth, recvDepth, sendSge, recvSge, bytes, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, signalAll);
    }

    public ConnectionOptions withSignalAll(boolean all) {
        return new ConnectionOptions(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, rdmaReadDepth, retryCount, rnrRetryCount, all);
    }

    /** Outstanding RDMA Reads/atomics each way (responder_resources, initiator_depth). */
    public ConnectionOptions withRdmaReadDepth(int depth) {
        return new ConnectionOptions(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, depth, retryCount, rnrRetryCount, signalAll);
    }

    /**
     * Transport retries before IBV_WC_RETRY_EXC_ERR (0..7). rxe takes 7 to mean
     * "retry forever", as 7 means for RNR retries, so a QP on a dead link
     * reports nothing there; 6 or less makes the failure show.
     */
    public ConnectionOptions withRetry(int count) {
        return new ConnectionOptions(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, rdmaReadDepth, count, rnrRetryCount, signalAll);
    }

    public ConnectionOptions withRnrRetry(int count) {
        return new ConnectionOptions(sendDepth, recvDepth, sendSge, recvSge, inlineData, cqSize, rdmaReadDepth, retryCount, count, signalAll);
    }
}

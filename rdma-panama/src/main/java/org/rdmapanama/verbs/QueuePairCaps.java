package org.rdmapanama.verbs;

/**
 * A queue pair's queues ({@code struct ibv_qp_cap}) and whether every send is
 * signaled ({@code sq_sig_all}): the one model of them, which both
 * {@link QueuePairConfig} and the connection layer's options carry. Checked
 * here against what any device could take; the device's own limits are
 * checked when the queue pair is created.
 *
 * @param sendWr     send queue depth
 * @param recvWr     receive queue depth (ignored on a QP with a shared receive queue)
 * @param sendSge    scatter/gather entries per send WR
 * @param recvSge    scatter/gather entries per receive WR
 * @param inlineData bytes a send may carry inline (copied at post time; no lkey needed)
 * @param signalAll  true: every send completes on the CQ; false: only those flagged signaled
 */
public record QueuePairCaps(int sendWr, int recvWr, int sendSge, int recvSge, int inlineData, boolean signalAll) {
    /** The largest SGE count and inline size accepted before asking a device. */
    static final int MAX_SGE = 1024, MAX_INLINE = 1 << 20;

    public QueuePairCaps {
        check("send queue depth", sendWr, 1, Integer.MAX_VALUE);
        check("receive queue depth", recvWr, 1, Integer.MAX_VALUE);
        check("SGEs per send", sendSge, 1, MAX_SGE);
        check("SGEs per receive", recvSge, 1, MAX_SGE);
        check("inline data size", inlineData, 0, MAX_INLINE);
    }

    private static void check(String what, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(what + " must be " + (max == Integer.MAX_VALUE ? "at least " + min
                    : min + ".." + max) + ", got " + v);
        }
    }

    /** {@code depth} WRs each way, one SGE each, no inline data, every send signaled. */
    public static QueuePairCaps of(int depth) {
        return new QueuePairCaps(depth, depth, 1, 1, 0, true);
    }

    public QueuePairCaps withDepth(int send, int recv) {
        return new QueuePairCaps(send, recv, sendSge, recvSge, inlineData, signalAll);
    }

    public QueuePairCaps withSge(int send, int recv) {
        return new QueuePairCaps(sendWr, recvWr, send, recv, inlineData, signalAll);
    }

    public QueuePairCaps withInline(int bytes) {
        return new QueuePairCaps(sendWr, recvWr, sendSge, recvSge, bytes, signalAll);
    }

    public QueuePairCaps withSignalAll(boolean all) {
        return new QueuePairCaps(sendWr, recvWr, sendSge, recvSge, inlineData, all);
    }
}

package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.internal.DataPath;

/**
 * Posts to one {@link QueuePair} from one thread, the one that created it,
 * without the shared arena's atomic acquire and release that
 * {@link QueuePair#postSend} and {@link QueuePair#postRecv} pay on every call.
 * <p>
 * The QP and its work requests are passed to the provider by address. While
 * this poster is open the QP refuses to close ({@link ResourceInUseException}
 * naming the poster); the work requests' memory is the QP's, so it lives as
 * long; and only the owning thread may post or close, so a close never runs
 * under a post. If the thread ends without closing it, any thread may close it.
 * <p>
 * Another thread gets a {@link WrongThreadException}. Close it on its thread
 * before closing the QP (or the connection or protection domain it belongs to).
 */
public final class ConfinedPoster implements AutoCloseable {
    private final QueuePair qp;
    private final ThreadConfinement thread;
    private final long qpAddress;
    private final long badWr;
    private final boolean sendBound, recvBound; // the functions DataPath's constant call sites are bound to

    ConfinedPoster(QueuePair qp) {
        this.qp = qp;
        this.thread = new ThreadConfinement("ConfinedPoster of " + qp.description());
        qp.addUser(thread); // refused if the QP is closing; from here on it cannot close
        this.qpAddress = qp.qp().address();
        this.badWr = qp.badWrAddress();
        this.sendBound = DataPath.bindPostSend(qp.postSendFn());
        this.recvBound = DataPath.bindPostRecv(qp.postRecvFn());
    }

    /** {@link QueuePair#postSend}, from the owning thread. */
    public void postSend(SendRequest request) throws RdmaException {
        thread.check();
        if (request.owner != qp) {
            throw new IllegalArgumentException("this SendRequest was built for " + request.owner + ", not " + qp);
        }
        if (request.closed) {
            throw new ClosedResourceException("this SendRequest of " + qp + " is closed");
        }
        long wr = request.first().address();
        int rc = sendBound ? DataPath.postSendBound(qpAddress, wr, badWr) : DataPath.postAt(qp.postSendFn(), qpAddress, wr, badWr);
        if (rc != 0) {
            throw qp.postFailure("ibv_post_send", rc);
        }
    }

    /** {@link QueuePair#postRecv}, from the owning thread. */
    public void postRecv(ReceiveRequest request) throws RdmaException {
        thread.check();
        if (request.owner != qp) { // its memory lives and dies with its owner
            throw new IllegalArgumentException("this ReceiveRequest was built for " + request.owner + ", not " + qp);
        }
        long wr = request.first().address();
        int rc = recvBound ? DataPath.postRecvBound(qpAddress, wr, badWr) : DataPath.postAt(qp.postRecvFn(), qpAddress, wr, badWr);
        if (rc != 0) {
            throw qp.postFailure("ibv_post_recv", rc);
        }
    }

    public QueuePair queuePair() {
        return qp;
    }

    /** Releases the QP. On the owning thread, or on any once it has ended; idempotent. */
    @Override
    public void close() {
        if (thread.close()) {
            qp.removeUser(thread);
        }
    }

    @Override
    public String toString() {
        return thread.toString();
    }
}

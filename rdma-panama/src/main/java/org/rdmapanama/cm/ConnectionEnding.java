package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;

/** A connection's one end signal ({@link RdmaConnection#ended()}): the first end wins, the others are no-ops. */
final class ConnectionEnding {
    private static final class Log { // lazily: see org.rdmapanama.internal.Cleanup
        static final Logger LOG = LoggerFactory.getLogger(RdmaConnection.class);
    }

    private final RdmaConnection connection;
    private final CompletableFuture<ConnectionEnd> ended = new CompletableFuture<>();

    ConnectionEnding(RdmaConnection connection) {
        this.connection = connection;
    }

    /** False if it had ended already. */
    boolean end(ConnectionEnd.Reason reason, String detail) {
        return !ended.isDone() && ended.complete(new ConnectionEnd(reason, detail));
    }

    CompletableFuture<ConnectionEnd> view() {
        return ended.copy();
    }

    /** The connection's events, on the loop thread, before any waiter sees them. */
    void onEvent(CmEvent ev) {
        ConnectionEnd.Reason why = switch (ev.type()) {
            case DISCONNECTED -> ConnectionEnd.Reason.DISCONNECTED;
            case DEVICE_REMOVAL -> ConnectionEnd.Reason.DEVICE_REMOVED;
            default -> null;
        };
        if (why == null || ended.isDone()) {
            return;
        }
        RdmaConnection.State was = connection.markDisconnected();
        // Before ESTABLISHED the event fails the set-up's future instead; after close, close ended it.
        if (was == RdmaConnection.State.ESTABLISHED || was == RdmaConnection.State.DISCONNECTED) {
            // Ended before the flush: whoever polls the flushed completions can then say why.
            end(why, ev.type().cName() + " on " + connection);
            flush(ev.type().cName());
        }
    }

    /** {@link RdmaConnection#fail}. */
    boolean fail(String detail) {
        if (!end(ConnectionEnd.Reason.FAILED, detail)) {
            return false;
        }
        RdmaConnection.State was = connection.markDisconnected();
        if (was != RdmaConnection.State.CLOSED) {
            flush("fail");
        }
        if (was == RdmaConnection.State.ESTABLISHED) {
            connection.disconnectQuietly("failing");
        }
        return true;
    }

    /**
     * Moves the QP to ERR so that what is outstanding completes with
     * WR_FLUSH_ERR instead of staying pending forever: neither rxe nor siw does
     * it by itself. A QP closed meanwhile has nothing to flush.
     */
    void flush(String after) {
        try {
            connection.queuePair().toError();
        } catch (RdmaException | IllegalStateException e) {
            Log.LOG.debug("moving {} to ERR after {}: {}", connection, after, e.getMessage());
        }
    }
}

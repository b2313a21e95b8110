package org.rdmapanama.channel;

import org.rdmapanama.cm.ConnectionEnd;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.WcStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a channel comes to its end, on its loop thread: the graceful close
 * (BYE once everything sent is delivered, then the disconnect), the
 * connection's end as rdma_cm or a flushed completion reports it, and the
 * deadlines the loop watches: the graceful close's, the wait for rdma_cm's
 * report after a flush, and the drain's; and the end of both closes: the
 * drain ({@link #startDrain}) and the finish.
 */
final class Closing {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);
    }

    static final long DRAIN_NANOS = 1_000_000_000L;
    private static final long GRACEFUL_NANOS = 10_000_000_000L;
    private static final long END_REPORT_NANOS = 500_000_000L;

    private final MessageChannel channel;
    private final ChannelLoop loop;
    private final RdmaConnection connection;
    private final SendSide sender;
    private final ReceiveSide receiver;
    private final String name;
    private boolean awaitingEnd; // a flush came before rdma_cm said why the connection ended, or the reverse
    private ConnectionEnd pendingEnd; // rdma_cm's report, held until the flush
    private long deadline;

    Closing(MessageChannel channel, ChannelLoop loop, RdmaConnection connection, SendSide sender,
            ReceiveSide receiver, String name) {
        this.channel = channel;
        this.loop = loop;
        this.connection = connection;
        this.sender = sender;
        this.receiver = receiver;
        this.name = name;
    }

    /** The loop calls {@link #deadlinePassed} once {@code nanos} from now have passed. */
    void watch(long nanos) {
        deadline = System.nanoTime() + nanos;
        loop.watchDeadline(this);
    }

    void closeGracefully() {
        MessageChannel.State state = channel.state();
        if (state == MessageChannel.State.OPEN) {
            channel.state(MessageChannel.State.CLOSING);
            watch(GRACEFUL_NANOS);
            channel.markDirty();
        } else if (state == MessageChannel.State.CONNECTING) {
            channel.fail(new ClosedResourceException(name + " was closed before it was connected"));
        }
    }

    /** Once all that was sent is delivered and read, says BYE; once that completes, disconnects. */
    void continueClosing() throws RdmaException {
        if (!sender.allSent()) {
            return;
        }
        if (!sender.byeSent()) {
            sender.sayBye();
            return;
        }
        if (sender.unfinished() > 0) {
            return;
        }
        connection.disconnect();
        startDrain();
    }

    /** The connection ended underneath (the cm thread's report, run on the loop). */
    void onEnded(ConnectionEnd end) {
        onEnded(end, false);
    }

    /** @param flushed a flushed completion was polled: a BYE the peer sent before it has been seen */
    private void onEnded(ConnectionEnd end, boolean flushed) {
        MessageChannel.State state = channel.state();
        if (state == MessageChannel.State.CLOSED || state == MessageChannel.State.DRAINING) {
            return;
        }
        boolean disconnected = end.reason() == ConnectionEnd.Reason.DISCONNECTED;
        if (disconnected && (receiver.peerSaidBye() || sender.byeSent())) {
            startDrain(); // a graceful close by one side
            return;
        }
        if (disconnected && !flushed && (receiver.outstanding() > 0 || receiver.sharedReceives())) {
            // rdma_cm may report before this loop polled the peer's BYE: judge at the first flushed completion
            // (an SRQ's receives do not flush: at the BYE, or at the deadline)
            pendingEnd = end;
            if (!awaitingEnd) {
                awaitingEnd = true;
                watch(END_REPORT_NANOS);
            }
            return;
        }
        channel.fail(new RdmaException(name + ": " + switch (end.reason()) {
            case DISCONNECTED -> "the peer disconnected without closing its channel (" + end.detail() + ")";
            case DEVICE_REMOVED -> "the device was removed (" + end.detail() + ")";
            case FAILED -> end.detail();
            case CLOSED -> "the connection was closed";
        }));
    }

    void byeReceived() {
        if (awaitingEnd && pendingEnd != null) {
            onEnded(pendingEnd, true);
        }
    }

    void completionFailed(String what, WcStatus status, int vendorError) {
        MessageChannel.State state = channel.state();
        if (state == MessageChannel.State.DRAINING || state == MessageChannel.State.CLOSED) {
            return; // flushed: expected
        }
        if (status == WcStatus.WR_FLUSH_ERR) {
            // The QP went to ERR because the connection ended: say how it ended, not that something flushed.
            ConnectionEnd end = connection.ended().getNow(null);
            if (receiver.peerSaidBye() || end != null) {
                onEnded(end != null ? end : new ConnectionEnd(ConnectionEnd.Reason.DISCONNECTED, "after BYE"), true);
                return;
            }
            // siw's QP fails with its TCP stream, before rdma_cm reports why: wait a little for the report.
            if (!awaitingEnd) {
                awaitingEnd = true;
                watch(END_REPORT_NANOS);
            }
            return;
        }
        String detail = status == WcStatus.WR_FLUSH_ERR
                ? what + " was flushed: the queue pair went to the error state"
                : what + " failed with " + status + " (vendor error 0x" + Integer.toHexString(vendorError) + ")";
        channel.fail(new RdmaException(name + ": " + detail));
    }

    /** Called by the loop when the deadline passes: no end report, a graceful close stuck, or a drain stuck. */
    void deadlinePassed(long now) {
        MessageChannel.State state = channel.state();
        if (awaitingEnd && pendingEnd != null
                && (state == MessageChannel.State.OPEN || state == MessageChannel.State.CLOSING)) {
            onEnded(pendingEnd, true);
        } else if (awaitingEnd && (state == MessageChannel.State.OPEN || state == MessageChannel.State.CLOSING)) {
            channel.fail(new RdmaException(name + ": its queue pair went to the error state (completions flushed),"
                    + " and rdma_cm reported no end within " + END_REPORT_NANOS / 1_000_000 + " ms"));
        } else if (state == MessageChannel.State.CLOSING && now - deadline >= 0) {
            channel.fail(new RdmaException(name + ": the graceful close did not finish within "
                    + GRACEFUL_NANOS / 1_000_000_000L + " s"));
        } else if (state == MessageChannel.State.DRAINING && now - deadline >= 0) {
            Log.LOG.debug("{}: {} receives never completed after the flush; closing anyway",
                    name, receiver.outstanding());
            finish();
        }
    }

    /** Drops what was not posted and flushes what was; finishes once every completion is back. */
    void startDrain() {
        MessageChannel.State was = channel.state();
        channel.state(MessageChannel.State.DRAINING);
        watch(DRAIN_NANOS);
        sender.dropQueued();
        receiver.dropDeliveries();
        if (was == MessageChannel.State.CONNECTING && channel.poster() == null) {
            // never activated: nothing was posted but receives, and the connection closes them
            finish();
            return;
        }
        try {
            connection.queuePair().toError(); // flushes what is outstanding
            connection.disconnect(); // at once: the peer learns now, not after the flushes came in
        } catch (RdmaException | RuntimeException e) {
            Log.LOG.debug("moving {} to ERR and disconnecting: {}", name, e.getMessage());
        }
        // Only the receives: every one flushes, while an unsignaled send that completed never reports
        // (its buffer is recycled at the finish; a late completion finds the channel's generation gone).
        if (receiver.outstanding() == 0) {
            finish();
        }
    }

    void finish() {
        channel.state(MessageChannel.State.CLOSED);
        if (channel.poster() != null) {
            channel.poster().close();
        }
        Throwable late = null;
        try {
            connection.close();
        } catch (RdmaException | RuntimeException e) {
            Log.LOG.warn("closing the connection of {}: {}", name, e.toString());
            late = e;
        }
        // After the QP is gone: with an SRQ the drain did not wait for a flush, so the device may still have used them.
        sender.recycleAll();
        receiver.recycleReads();
        receiver.recycleSlots();
        channel.ended(late);
    }

    long deadline() {
        return deadline;
    }

    boolean watching() {
        MessageChannel.State state = channel.state();
        return awaitingEnd || state == MessageChannel.State.CLOSING || state == MessageChannel.State.DRAINING;
    }
}

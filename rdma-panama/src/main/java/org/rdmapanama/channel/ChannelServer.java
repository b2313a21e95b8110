package org.rdmapanama.channel;

import org.rdmapanama.cm.CmEventLoop;
import org.rdmapanama.cm.ConnectRequest;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.error.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A listening address of a {@link ChannelGroup}: it accepts every peer's
 * channel, on the group's loops in turn, and hands it to its handler
 * ({@link MessageHandler#onOpen} first), or hands each request to a
 * {@link ChannelAcceptor} that chooses its loop. A peer that is not an
 * rdma-panama channel (its private data says otherwise) is rejected. Closing
 * the server stops accepting; the channels it accepted stay open.
 */
public final class ChannelServer implements AutoCloseable {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(ChannelServer.class);
    }

    private static final Duration ACCEPT_WAIT = Duration.ofHours(1);
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(15);

    private final ChannelGroup group;
    private final RdmaListener listener;
    private final MessageHandler handler;
    private final ChannelAcceptor acceptor;
    private final InetSocketAddress address;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private volatile boolean closing;

    /** One of {@code handler} (the group's loops in turn) and {@code acceptor} (its choice). */
    ChannelServer(ChannelGroup group, InetSocketAddress address, MessageHandler handler, ChannelAcceptor acceptor,
                  ConnectionOptions options, CmEventLoop cmLoop) throws RdmaException {
        this.group = group;
        this.handler = handler;
        this.acceptor = acceptor;
        this.listener = RdmaListener.bind(address, 128, options, cmLoop);
        this.address = listener.address(); // with the port chosen for port 0
        if (acceptor != null) {
            requestNext();
        } else {
            acceptNext();
        }
    }

    /** Where it listens: the port is the one chosen when port 0 was asked for. */
    public InetSocketAddress address() {
        return address;
    }

    /** Completes when the server is closed. */
    public CompletableFuture<Void> closeFuture() {
        return closed.copy();
    }

    private void acceptNext() {
        if (closing) {
            return;
        }
        ChannelLoop loop = group.loopForAccept();
        listener.acceptAsync(ACCEPT_WAIT, loop.shared).whenComplete((conn, e) -> {
            if (e != null) {
                if (!closing) {
                    Log.LOG.warn("{} stops accepting: {}", this, e.toString());
                }
                return;
            }
            if (conn != null) {
                take(loop, conn);
            }
            acceptNext();
        });
    }

    private void requestNext() {
        if (closing) {
            return;
        }
        listener.requestAsync(ACCEPT_WAIT).whenComplete((r, e) -> {
            if (e != null) {
                if (!closing) {
                    Log.LOG.warn("{} stops accepting: {}", this, e.toString());
                }
                return;
            }
            if (r != null) {
                try {
                    Wire.peer(r.privateData());
                    acceptor.onRequest(new ChannelRequest(this, r));
                } catch (ProtocolException x) {
                    Log.LOG.info("{} rejects a peer: {}", this, x.getMessage());
                    r.reject();
                } catch (RuntimeException x) {
                    Log.LOG.warn("the acceptor of {} failed: {}", this, x.toString());
                    r.reject();
                }
            }
            requestNext();
        });
    }

    CompletableFuture<MessageChannel> accept(ConnectRequest request, ChannelLoop loop, MessageHandler h) {
        loop.setupBegins();
        try {
            return open(loop, request.open(loop.shared), h);
        } catch (RdmaException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            loop.setupEnds();
        }
    }

    private void take(ChannelLoop loop, RdmaConnection conn) {
        try {
            Wire.peer(conn.peerPrivateData()); // refuse what is not a channel before making anything
        } catch (ProtocolException e) {
            Log.LOG.info("{} rejects a peer: {}", this, e.getMessage());
            try {
                conn.reject(new byte[0]);
            } catch (RdmaException | RuntimeException x) {
                Log.LOG.debug("rejecting: {}", x.toString());
            }
            Closer.quietly(conn);
            return;
        }
        open(loop, conn, handler).exceptionally(e -> {
            Log.LOG.warn("{} could not take a channel: {}", this, e.getMessage());
            return null;
        });
    }

    private CompletableFuture<MessageChannel> open(ChannelLoop loop, RdmaConnection conn, MessageHandler h) {
        MessageChannel ch;
        try {
            ch = group.newChannel(loop, conn, h, "channel from a peer of " + address);
        } catch (RdmaException | RuntimeException e) {
            Closer.quietly(conn);
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<MessageChannel> opened = new CompletableFuture<>();
        conn.acceptAsync(group.privateData(), SETUP_TIMEOUT).whenComplete((c, x) -> {
            if (x != null) {
                Throwable cause = RdmaException.unwrap(x);
                ch.abort(cause);
                opened.completeExceptionally(cause);
                return;
            }
            group.open(ch, conn, opened);
        });
        return opened;
    }

    @Override
    public void close() throws RdmaException {
        closing = true;
        try {
            listener.close();
        } finally {
            group.serverClosed(this);
            closed.complete(null);
        }
    }

    @Override
    public String toString() {
        return "channel server on " + address;
    }

    ChannelGroup group() {
        return group;
    }
}

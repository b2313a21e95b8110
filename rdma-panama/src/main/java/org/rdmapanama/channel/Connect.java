package org.rdmapanama.channel;

import org.rdmapanama.cm.CmEventLoop;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.error.RdmaException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One connect of a {@link ChannelGroup}: the route resolved, the channel made
 * on its loop with its receives posted, the connection set up, the channel
 * opened. A cancel of its future abandons it at whichever step it is.
 */
final class Connect {
    private final ChannelGroup group;
    private final InetSocketAddress remote;
    private final MessageHandler handler;
    private final ChannelLoop loop;
    private final CompletableFuture<MessageChannel> result = new CompletableFuture<>();
    private final AtomicReference<MessageChannel> made = new AtomicReference<>();

    Connect(ChannelGroup group, InetSocketAddress remote, MessageHandler handler, ChannelLoop loop) {
        this.group = group;
        this.remote = remote;
        this.handler = handler;
        this.loop = loop;
    }

    CompletableFuture<MessageChannel> start(ConnectionOptions options, Duration timeout, CmEventLoop cmLoop) {
        result.whenComplete((c, e) -> abandonIfCancelled(made.get()));
        loop.setupBegins();
        RdmaConnection.resolveAsync(remote, new InetSocketAddress(group.address(), 0), options, timeout,
                cmLoop, loop.shared).whenComplete((conn, e) -> {
            try {
                if (e != null) {
                    result.completeExceptionally(RdmaException.unwrap(e));
                } else {
                    connect(conn, timeout); // cancelled meanwhile: the channel is made and aborted, as at any step
                }
            } finally {
                loop.setupEnds();
            }
        });
        return result;
    }

    private void connect(RdmaConnection conn, Duration timeout) {
        MessageChannel ch;
        try {
            ch = group.newChannel(loop, conn, handler, "channel to " + remote);
        } catch (RdmaException | RuntimeException x) {
            Closer.quietly(conn);
            result.completeExceptionally(x);
            return;
        }
        made.set(ch);
        if (result.isCancelled()) {
            abandonIfCancelled(ch); // the cancel came before the set, and saw no channel
            return;
        }
        conn.connectAsync(group.privateData(), timeout).whenComplete((c, x) -> {
            if (x != null) {
                ch.abort(RdmaException.unwrap(x));
                result.completeExceptionally(RdmaException.unwrap(x));
                return;
            }
            group.open(ch, conn, result);
        });
    }

    private void abandonIfCancelled(MessageChannel ch) {
        if (ch != null && result.isCancelled()) {
            ch.abort(new CancellationException("the connect of " + ch + " was cancelled"));
        }
    }
}

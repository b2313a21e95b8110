package org.rdmapanama.channel;

import org.rdmapanama.cm.ConnectRequest;

import java.util.concurrent.CompletableFuture;

/** A peer's request for a channel, handed to a {@link ChannelAcceptor}: accept it on a loop, or reject it. */
public final class ChannelRequest {
    private final ChannelServer server;
    private final ConnectRequest request;

    ChannelRequest(ChannelServer server, ConnectRequest request) {
        this.server = server;
        this.request = request;
    }

    /**
     * Opens the channel on {@code loop} with {@code handler}; the future completes once it is open (on the
     * loop's thread), or with why it could not be. The loop must be of the listening group: its completion
     * queue is on the group's device.
     */
    public CompletableFuture<MessageChannel> accept(DrivenLoop loop, MessageHandler handler) {
        if (loop.group() != server.group()) {
            request.reject();
            return CompletableFuture.failedFuture(new IllegalArgumentException(loop + " is a loop of "
                    + loop.group() + ", not of the group listening at " + server.address() + ": the request was rejected"));
        }
        return server.accept(request, loop.loop, handler);
    }

    public void reject() {
        request.reject();
    }

    @Override
    public String toString() {
        return "channel request to " + server.address();
    }
}

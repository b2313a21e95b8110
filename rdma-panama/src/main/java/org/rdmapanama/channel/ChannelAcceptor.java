package org.rdmapanama.channel;

/**
 * Takes a {@link ChannelServer}'s requests one by one, for a caller that
 * chooses each channel's loop after the request came (as Netty registers an
 * accepted child on a loop of its choosing).
 */
@FunctionalInterface
public interface ChannelAcceptor {
    /**
     * A peer asks for a channel: {@link ChannelRequest#accept} or {@link ChannelRequest#reject} it soon
     * (the peer gives up after its connect timeout). Runs on the group's connection-manager thread: do not block.
     */
    void onRequest(ChannelRequest request);
}

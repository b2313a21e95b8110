package org.rdmapanama.netty;

import io.netty.channel.ChannelOption;

/**
 * Options of this transport's channels. Sizes shared by every channel of a
 * transport (window, slot size) are its {@link org.rdmapanama.channel.ChannelOptions}.
 */
public final class RdmaChannelOption {
    private RdmaChannelOption() {}

    /**
     * Received messages a channel hands on as views of their receive slots before it copies instead (default:
     * half the window). Each view held withholds the sender's credit; an application that keeps many reads
     * (a cumulating decoder waiting for a large frame) would otherwise stop the sender for good.
     */
    public static final ChannelOption<Integer> MAX_HELD_VIEWS =
            ChannelOption.valueOf(RdmaChannelOption.class, "MAX_HELD_VIEWS");
}

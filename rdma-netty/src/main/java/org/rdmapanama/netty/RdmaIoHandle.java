package org.rdmapanama.netty;

import io.netty.channel.IoEvent;
import io.netty.channel.IoHandle;
import io.netty.channel.IoRegistration;

/**
 * What registers with an {@link RdmaIoHandler}: the unsafe of this transport's
 * channels. Their events come as message-channel callbacks on the loop thread,
 * not through {@link #handle}.
 */
interface RdmaIoHandle extends IoHandle {
    @Override
    default void handle(IoRegistration registration, IoEvent ioEvent) {
        throw new UnsupportedOperationException("RDMA channels get their events from their message channels");
    }

    /** The channel's reads of the pass just made have all been fired: fire channelReadComplete. */
    void readsDone();
}

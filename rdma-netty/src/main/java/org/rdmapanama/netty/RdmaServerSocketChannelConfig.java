package org.rdmapanama.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.ServerSocketChannelConfig;

import java.util.Map;

/** A server channel's configuration: TCP's listening options are kept and returned, and change nothing. */
public final class RdmaServerSocketChannelConfig extends DefaultChannelConfig implements ServerSocketChannelConfig {
    private volatile int backlog = 128;
    private volatile boolean reuseAddress = true;
    private volatile int receiveBufferSize = 65536;

    RdmaServerSocketChannelConfig(RdmaServerSocketChannel channel) {
        super(channel, new ServerChannelRecvByteBufAllocator());
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), ChannelOption.SO_BACKLOG, ChannelOption.SO_REUSEADDR,
                ChannelOption.SO_RCVBUF);
    }

    @SuppressWarnings("unchecked")
    @Override
    public <T> T getOption(ChannelOption<T> option) {
        if (option == ChannelOption.SO_BACKLOG) {
            return (T) Integer.valueOf(backlog);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            return (T) Boolean.valueOf(reuseAddress);
        } else if (option == ChannelOption.SO_RCVBUF) {
            return (T) Integer.valueOf(receiveBufferSize);
        }
        return super.getOption(option);
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        validate(option, value);
        if (option == ChannelOption.SO_BACKLOG) {
            setBacklog((Integer) value);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            setReuseAddress((Boolean) value);
        } else if (option == ChannelOption.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    @Override public int getBacklog() { return backlog; }
    @Override public RdmaServerSocketChannelConfig setBacklog(int v) { backlog = v; return this; }
    @Override public boolean isReuseAddress() { return reuseAddress; }
    @Override public RdmaServerSocketChannelConfig setReuseAddress(boolean v) { reuseAddress = v; return this; }
    @Override public int getReceiveBufferSize() { return receiveBufferSize; }
    @Override public RdmaServerSocketChannelConfig setReceiveBufferSize(int v) { receiveBufferSize = v; return this; }
    @Override public RdmaServerSocketChannelConfig setPerformancePreferences(int c, int l, int b) { return this; }

    @Override public RdmaServerSocketChannelConfig setConnectTimeoutMillis(int v) { super.setConnectTimeoutMillis(v); return this; }
    @Deprecated
    @Override public RdmaServerSocketChannelConfig setMaxMessagesPerRead(int v) { super.setMaxMessagesPerRead(v); return this; }
    @Override public RdmaServerSocketChannelConfig setWriteSpinCount(int v) { super.setWriteSpinCount(v); return this; }
    @Override public RdmaServerSocketChannelConfig setAllocator(ByteBufAllocator v) { super.setAllocator(v); return this; }
    @Override public RdmaServerSocketChannelConfig setRecvByteBufAllocator(RecvByteBufAllocator v) { super.setRecvByteBufAllocator(v); return this; }
    @Override public RdmaServerSocketChannelConfig setAutoRead(boolean v) { super.setAutoRead(v); return this; }
    @Override public RdmaServerSocketChannelConfig setMessageSizeEstimator(MessageSizeEstimator v) { super.setMessageSizeEstimator(v); return this; }
    @Override public RdmaServerSocketChannelConfig setWriteBufferHighWaterMark(int v) { super.setWriteBufferHighWaterMark(v); return this; }
    @Override public RdmaServerSocketChannelConfig setWriteBufferLowWaterMark(int v) { super.setWriteBufferLowWaterMark(v); return this; }
    @Override public RdmaServerSocketChannelConfig setWriteBufferWaterMark(WriteBufferWaterMark v) { super.setWriteBufferWaterMark(v); return this; }
}

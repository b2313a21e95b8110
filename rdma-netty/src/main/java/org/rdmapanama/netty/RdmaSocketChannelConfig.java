package org.rdmapanama.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannelConfig;

import java.util.Map;

/**
 * A channel's configuration. TCP's options are kept and returned but change
 * nothing (there is no socket): they are accepted so that code written for
 * TCP (gRPC sets SO_KEEPALIVE) runs unchanged and Bootstrap logs no warning.
 */
public final class RdmaSocketChannelConfig extends DefaultChannelConfig implements SocketChannelConfig {
    private volatile boolean tcpNoDelay = true;
    private volatile boolean keepAlive;
    private volatile boolean reuseAddress;
    private volatile boolean allowHalfClosure;
    private volatile int soLinger = -1;
    private volatile int sendBufferSize = 65536;
    private volatile int receiveBufferSize = 65536;
    private volatile int trafficClass;
    private volatile int maxHeldViews;
    private volatile boolean allocatorSet;

    RdmaSocketChannelConfig(RdmaSocketChannel channel, int maxHeldViews) {
        super(channel, new WholeMessages());
        this.maxHeldViews = maxHeldViews;
    }

    /**
     * The default read handle: every read is a whole message, a view of the slot it landed in. A handle
     * set by the application caps each read at its {@code guess()}, as NIO's reads are.
     */
    static final class WholeMessages extends DefaultMaxMessagesRecvByteBufAllocator {
        @Override
        public Handle newHandle() {
            return new MaxMessageHandle() {
                @Override
                public int guess() {
                    return Integer.MAX_VALUE;
                }
            };
        }
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), ChannelOption.TCP_NODELAY, ChannelOption.SO_KEEPALIVE,
                ChannelOption.SO_REUSEADDR, ChannelOption.SO_LINGER, ChannelOption.SO_SNDBUF, ChannelOption.SO_RCVBUF,
                ChannelOption.IP_TOS, ChannelOption.ALLOW_HALF_CLOSURE, RdmaChannelOption.MAX_HELD_VIEWS);
    }

    @SuppressWarnings("unchecked")
    @Override
    public <T> T getOption(ChannelOption<T> option) {
        Object v;
        if (option == ChannelOption.TCP_NODELAY) {
            v = tcpNoDelay;
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            v = keepAlive;
        } else if (option == ChannelOption.SO_REUSEADDR) {
            v = reuseAddress;
        } else if (option == ChannelOption.SO_LINGER) {
            v = soLinger;
        } else if (option == ChannelOption.SO_SNDBUF) {
            v = sendBufferSize;
        } else if (option == ChannelOption.SO_RCVBUF) {
            v = receiveBufferSize;
        } else if (option == ChannelOption.IP_TOS) {
            v = trafficClass;
        } else if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            v = allowHalfClosure;
        } else if (option == RdmaChannelOption.MAX_HELD_VIEWS) {
            v = maxHeldViews;
        } else {
            return super.getOption(option);
        }
        return (T) v;
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        validate(option, value);
        if (option == ChannelOption.TCP_NODELAY) {
            setTcpNoDelay((Boolean) value);
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            setKeepAlive((Boolean) value);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            setReuseAddress((Boolean) value);
        } else if (option == ChannelOption.SO_LINGER) {
            setSoLinger((Integer) value);
        } else if (option == ChannelOption.SO_SNDBUF) {
            setSendBufferSize((Integer) value);
        } else if (option == ChannelOption.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else if (option == ChannelOption.IP_TOS) {
            setTrafficClass((Integer) value);
        } else if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            setAllowHalfClosure((Boolean) value);
        } else if (option == RdmaChannelOption.MAX_HELD_VIEWS) {
            setMaxHeldViews((Integer) value);
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    public int getMaxHeldViews() {
        return maxHeldViews;
    }

    public RdmaSocketChannelConfig setMaxHeldViews(int views) {
        if (views < 0) {
            throw new IllegalArgumentException("MAX_HELD_VIEWS must not be negative, got " + views);
        }
        maxHeldViews = views;
        return this;
    }

    @Override public boolean isTcpNoDelay() { return tcpNoDelay; }
    @Override public RdmaSocketChannelConfig setTcpNoDelay(boolean v) { tcpNoDelay = v; return this; }
    /** Negative: a graceful close; 0: an abortive one (what TCP's RST is). */
    @Override public int getSoLinger() { return soLinger; }
    @Override public RdmaSocketChannelConfig setSoLinger(int v) { soLinger = v; return this; }
    @Override public int getSendBufferSize() { return sendBufferSize; }
    @Override public RdmaSocketChannelConfig setSendBufferSize(int v) { sendBufferSize = v; return this; }
    @Override public int getReceiveBufferSize() { return receiveBufferSize; }
    @Override public RdmaSocketChannelConfig setReceiveBufferSize(int v) { receiveBufferSize = v; return this; }
    @Override public boolean isKeepAlive() { return keepAlive; }
    @Override public RdmaSocketChannelConfig setKeepAlive(boolean v) { keepAlive = v; return this; }
    @Override public int getTrafficClass() { return trafficClass; }
    @Override public RdmaSocketChannelConfig setTrafficClass(int v) { trafficClass = v; return this; }
    @Override public boolean isReuseAddress() { return reuseAddress; }
    @Override public RdmaSocketChannelConfig setReuseAddress(boolean v) { reuseAddress = v; return this; }
    @Override public RdmaSocketChannelConfig setPerformancePreferences(int c, int l, int b) { return this; }
    /** Kept only: the channel has no one-way close yet, so a peer's close closes both ways. */
    @Override public boolean isAllowHalfClosure() { return allowHalfClosure; }
    @Override public RdmaSocketChannelConfig setAllowHalfClosure(boolean v) { allowHalfClosure = v; return this; }

    @Override public RdmaSocketChannelConfig setConnectTimeoutMillis(int v) { super.setConnectTimeoutMillis(v); return this; }
    @Deprecated
    @Override public RdmaSocketChannelConfig setMaxMessagesPerRead(int v) { super.setMaxMessagesPerRead(v); return this; }
    @Override public RdmaSocketChannelConfig setWriteSpinCount(int v) { super.setWriteSpinCount(v); return this; }
    @Override public RdmaSocketChannelConfig setAllocator(ByteBufAllocator v) { super.setAllocator(v); allocatorSet = true; return this; }

    /** The transport's allocator, once the channel knows its transport, unless the application chose one. */
    void defaultAllocator(ByteBufAllocator v) {
        if (!allocatorSet) {
            super.setAllocator(v);
        }
    }
    @Override public RdmaSocketChannelConfig setRecvByteBufAllocator(RecvByteBufAllocator v) { super.setRecvByteBufAllocator(v); return this; }
    @Override public RdmaSocketChannelConfig setAutoRead(boolean v) { super.setAutoRead(v); return this; }
    @Override public RdmaSocketChannelConfig setAutoClose(boolean v) { super.setAutoClose(v); return this; }
    @Override public RdmaSocketChannelConfig setMessageSizeEstimator(MessageSizeEstimator v) { super.setMessageSizeEstimator(v); return this; }
    @Override public RdmaSocketChannelConfig setWriteBufferWaterMark(WriteBufferWaterMark v) { super.setWriteBufferWaterMark(v); return this; }
    @Override public RdmaSocketChannelConfig setWriteBufferHighWaterMark(int v) { super.setWriteBufferHighWaterMark(v); return this; }
    @Override public RdmaSocketChannelConfig setWriteBufferLowWaterMark(int v) { super.setWriteBufferLowWaterMark(v); return this; }

    @Override
    protected void autoReadCleared() {
        ((RdmaSocketChannel) channel).clearReadPending();
    }
}

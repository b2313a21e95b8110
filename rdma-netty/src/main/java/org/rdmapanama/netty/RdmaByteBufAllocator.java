package org.rdmapanama.netty;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.error.RdmaException;

/**
 * The transport's allocator, and its channels' default {@code ALLOCATOR}:
 * direct buffers come from the registered pool, so that a handler's
 * {@code ctx.alloc().buffer()}, once written, is sent where it lies. Heap
 * buffers, buffers larger than the largest message and buffers asked for
 * once the pool has registered half its limit (the rest is the channels':
 * buffers an application holds must not starve their sends and receives)
 * come from Netty's pooled allocator, and are copied when written, as any
 * buffer of another allocator is.
 * <p>
 * Netty's leak detector does not see the registered buffers: one that is
 * never released is lost to the pool until the transport closes.
 */
public final class RdmaByteBufAllocator extends AbstractByteBufAllocator {
    private final ChannelGroup group;
    private final PooledByteBufAllocator plain = PooledByteBufAllocator.DEFAULT;

    RdmaByteBufAllocator(ChannelGroup group) {
        super(true);
        this.group = group;
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return plain.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        if (initialCapacity <= group.options().maxMessageSize() && group.registeredBytes() < group.poolLimit() / 2) {
            MessageBuffer mb;
            try {
                mb = group.allocate(Math.max(1, initialCapacity));
            } catch (RdmaException | RuntimeException e) {
                return plain.directBuffer(initialCapacity, maxCapacity); // the pool is full, or closed
            }
            return RegisteredBuf.of(this, group, mb, maxCapacity);
        }
        return plain.directBuffer(initialCapacity, maxCapacity);
    }

    /** Netty's pooled allocator, for what should not hold registered memory (a reader's copies). */
    ByteBufAllocator plain() {
        return plain;
    }

    @Override
    public boolean isDirectBufferPooled() {
        return true;
    }

    @Override
    public String toString() {
        return "RdmaByteBufAllocator on " + group;
    }
}

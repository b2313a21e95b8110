package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import org.rdmapanama.channel.Message;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A received message as a read-only-length ByteBuf over the registered memory
 * it landed in, without a copy. Its last release releases the message: the
 * receive slot is posted again and the sender gets its credit back.
 */
final class ReceivedBuf extends UnpooledDirectByteBuf {
    private final Message message;
    private final AtomicInteger held;

    /** {@code held} counts the channel's views not yet released; this one is counted already. */
    ReceivedBuf(ByteBufAllocator alloc, Message message, AtomicInteger held) {
        super(alloc, message.segment().asSlice(0, message.length()).asByteBuffer(), message.length());
        this.message = message;
        this.held = held;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        if (newCapacity != capacity()) {
            // The memory is a receive slot the message does not own beyond its length.
            throw new UnsupportedOperationException("a received message's view cannot change its capacity");
        }
        return this;
    }

    @Override
    protected void deallocate() {
        // Not super's: the memory is the pool's, not a ByteBuffer to free.
        held.decrementAndGet();
        message.release();
    }
}

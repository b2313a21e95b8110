package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import org.rdmapanama.channel.Message;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A received message as a ByteBuf over the registered memory it landed in,
 * without a copy. Its last release releases the message: the receive slot is
 * posted again and the sender gets its credit back. The view is made once per
 * receive slot and attached to the slot's {@link Message} object, which the
 * channel reuses for every message landing there: a delivery allocates nothing.
 * As with Netty's pooled buffers, a reference kept past release sees the next
 * message.
 */
final class ReceivedBuf extends UnpooledDirectByteBuf {
    private final Message message;
    private final long address;
    private final AtomicInteger held;

    private ReceivedBuf(ByteBufAllocator alloc, Message message, AtomicInteger held) {
        super(alloc, message.segment().asByteBuffer(), (int) message.segment().byteSize());
        this.message = message;
        this.address = message.segment().address();
        this.held = held;
    }

    /**
     * The view of {@code m}, readable over its length; {@code held} counts the channel's views not yet released.
     * A rendezvous message's memory is another pool buffer each time, so a view on other memory is replaced.
     */
    static ReceivedBuf of(ByteBufAllocator alloc, Message m, AtomicInteger held) {
        ReceivedBuf v = m.attachment() instanceof ReceivedBuf b && b.held == held
                && b.address == m.segment().address() && m.length() <= b.capacity() ? b : null;
        if (v == null) {
            v = new ReceivedBuf(alloc, m, held);
            m.attach(v);
        } else {
            v.resetRefCnt();
        }
        v.setIndex(0, m.length());
        held.incrementAndGet();
        return v;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        if (newCapacity != capacity()) {
            throw new UnsupportedOperationException("a received message's view cannot change its capacity");
        }
        return this;
    }

    @Override
    protected void deallocate() {
        // Not super's: the memory is the pool's, not a ByteBuffer to free, and the view is kept for the next message.
        held.decrementAndGet();
        message.release();
    }
}

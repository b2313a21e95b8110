package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.internal.CleanableDirectBuffer;
import org.rdmapanama.channel.ChannelGroup;
import org.rdmapanama.channel.MessageBuffer;
import org.rdmapanama.error.RdmaException;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A ByteBuf over a registered buffer of the transport's pool, as
 * {@link RdmaByteBufAllocator} hands out: written to a channel of the same
 * transport while nothing else holds it, the buffer itself is sent, not a copy.
 * Growing moves it to a larger registered buffer (past the largest message, to
 * plain direct memory, which a write then copies). Its last release gives the
 * registered buffer back, unless it was sent: then it is the channel's.
 */
final class RegisteredBuf extends UnpooledDirectByteBuf {
    private final ChannelGroup group;
    private final int maxMessage;
    /** The registered buffer under the view now; null when that is plain memory, or once it was sent. */
    private MessageBuffer current;
    /** The first buffer, which super never frees (it was given, not allocated): released here. */
    private MessageBuffer first;
    /** A later buffer taken for a send: the Registered holding it must not release it when cleaned. */
    private MessageBuffer handOver;

    RegisteredBuf(RdmaByteBufAllocator alloc, ChannelGroup group, MessageBuffer mb, int maxCapacity) {
        super(alloc, mb.segment().asSlice(0, Math.min(mb.capacity(), maxCapacity)).asByteBuffer(), maxCapacity);
        this.group = group;
        this.maxMessage = group.options().maxMessageSize();
        this.current = mb;
        this.first = mb;
        setIndex(0, 0);
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        MessageBuffer old = current;
        super.capacity(newCapacity); // allocateDirectBuffer below sets current
        if (old != null && old == first && current != old) {
            first = null;
            old.release();
        }
        return this;
    }

    @Override
    protected CleanableDirectBuffer allocateDirectBuffer(int capacity) {
        MessageBuffer mb = null;
        if (capacity <= maxMessage) {
            try {
                mb = group.allocate(capacity);
            } catch (RdmaException | RuntimeException e) {
                // the pool is full or closed: plain memory, copied when written
            }
        }
        current = mb;
        return mb != null ? new Registered(mb, capacity) : new Plain(ByteBuffer.allocateDirect(capacity));
    }

    /**
     * The registered buffer to send in place of a copy, its readable bytes moved to its start, or null
     * when this view must be copied: it is shared, on plain memory, or of another transport. Once taken,
     * the buffer is the channel's; this view's release no longer frees it.
     */
    MessageBuffer takeForSend(ChannelGroup on) {
        MessageBuffer mb = current;
        if (mb == null || on != group || refCnt() != 1) {
            return null;
        }
        int r = readerIndex(), n = readableBytes();
        if (r > 0) {
            MemorySegment s = mb.segment();
            MemorySegment.copy(s, r, s, 0, n); // overlap-safe
            setIndex(0, n);
        }
        current = null;
        if (first == mb) {
            first = null;
        } else {
            handOver = mb;
        }
        return mb;
    }

    @Override
    protected void deallocate() {
        super.deallocate(); // cleans a Registered, unless it is the first buffer
        if (first != null) {
            MessageBuffer f = first;
            first = null;
            f.release();
        }
        current = null;
    }

    private final class Registered implements CleanableDirectBuffer {
        private final MessageBuffer mb;
        private final ByteBuffer buffer;

        Registered(MessageBuffer mb, int capacity) {
            this.mb = mb;
            this.buffer = mb.segment().asSlice(0, capacity).asByteBuffer();
        }

        @Override
        public ByteBuffer buffer() {
            return buffer;
        }

        @Override
        public void clean() {
            if (handOver == mb) {
                handOver = null;
            } else {
                mb.release();
            }
        }
    }

    /** Past the largest message, or with the pool full: memory the GC frees. */
    private record Plain(ByteBuffer buffer) implements CleanableDirectBuffer {
        @Override
        public void clean() {
        }
    }
}

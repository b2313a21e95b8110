package org.rdmapanama.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.EmptyByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
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
 * The view is attached to its first buffer and used again whenever the pool
 * hands that buffer out, unless it grew: an allocation then makes no object.
 * As with Netty's pooled buffers, a reference kept past release sees the
 * buffer's next use.
 */
final class RegisteredBuf extends UnpooledDirectByteBuf {
    /** A destination no other buffer is given: see {@link #locate}. */
    private static final ByteBuf LOCATE = new EmptyByteBuf(UnpooledByteBufAllocator.DEFAULT);
    private final ChannelGroup group;
    private final int maxMessage;
    private final MessageBuffer home; // the first buffer, which the view stays on unless it grows
    private boolean grew;
    /** The registered buffer under the view now; null when that is plain memory, or once it was sent. */
    private MessageBuffer current;
    /** The first buffer, which super never frees (it was given, not allocated): released here. */
    private MessageBuffer first;
    /** A later buffer taken for a send: the Registered holding it must not release it when cleaned. */
    private MessageBuffer handOver;
    /** {@link #locate}'s answer: event loop only, as the write path is. */
    private int located;

    private RegisteredBuf(RdmaByteBufAllocator alloc, ChannelGroup group, MessageBuffer mb, int maxCapacity) {
        super(alloc, mb.segment().asSlice(0, Math.min(mb.capacity(), maxCapacity)).asByteBuffer(), maxCapacity);
        this.group = group;
        this.maxMessage = group.options().maxMessageSize();
        this.home = mb;
        this.current = mb;
        this.first = mb;
        setIndex(0, 0);
    }

    /** The view of {@code mb}: the one attached to it when that is free and spans the buffer, else a new one. */
    static RegisteredBuf of(RdmaByteBufAllocator alloc, ChannelGroup group, MessageBuffer mb, int maxCapacity) {
        if (mb.attachment() instanceof RegisteredBuf r && r.refCnt() == 0 && !r.grew
                && r.capacity() == mb.capacity() && r.capacity() <= maxCapacity) {
            r.resetRefCnt();
            r.maxCapacity(maxCapacity);
            r.current = mb;
            r.first = mb;
            r.handOver = null;
            r.setIndex(0, 0);
            r.markReaderIndex();
            r.markWriterIndex();
            return r;
        }
        RegisteredBuf r = new RegisteredBuf(alloc, group, mb, maxCapacity);
        mb.attach(r);
        return r;
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
        grew = true;
        MessageBuffer mb = null;
        if (capacity <= maxMessage) {
            try {
                mb = group.allocate(capacity);
            } catch (RdmaException | RuntimeException e) {
                // the pool is full or closed: plain memory, copied when written
            }
        }
        current = mb;
        return mb != null ? new Registered(mb, capacity) : super.allocateDirectBuffer(capacity);
    }

    /**
     * The registered buffer to send in place of a copy, its readable bytes moved to its start, or null
     * when this view must be copied: it is shared, on plain memory, or of another transport. Once taken,
     * the buffer is the channel's; this view's release no longer frees it.
     */
    MessageBuffer takeForSend(ChannelGroup on) {
        return take(on, readerIndex(), readableBytes());
    }

    /**
     * As {@link #takeForSend}, for bytes {@code index..index+n} of this buffer (a composite's component):
     * the composite that holds this view must not read it afterwards.
     */
    MessageBuffer take(ChannelGroup on, int index, int n) {
        MessageBuffer mb = current;
        if (mb == null || on != group || refCnt() != 1) {
            return null;
        }
        if (index > 0) {
            MemorySegment s = mb.segment();
            MemorySegment.copy(s, index, s, 0, n); // overlap-safe
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

    /**
     * Where byte {@code index} of {@code view} (this buffer, or a slice or duplicate of it) lies in this
     * buffer; -1 when the view does not read from this buffer. Netty keeps a slice's offset to itself, but
     * a slice reads through its buffer's {@code getBytes}: asked to read into {@link #LOCATE}, this buffer
     * notes the index and copies nothing.
     */
    int locate(ByteBuf view, int index, int length) {
        located = -1;
        view.getBytes(index, LOCATE, 0, length);
        return located;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        if (dst == LOCATE) {
            checkIndex(index, length);
            located = index;
            return this;
        }
        return super.getBytes(index, dst, dstIndex, length);
    }

    @Override
    protected void deallocate() {
        if (!grew) {
            // Not super's, which drops the ByteBuffer: the view stays on its buffer for the buffer's next use.
            MessageBuffer f = first;
            first = null;
            current = null;
            if (f != null) {
                f.release(); // last: from here another thread may take the buffer, and this view with it
            }
            return;
        }
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

}

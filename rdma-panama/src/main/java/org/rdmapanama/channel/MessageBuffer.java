package org.rdmapanama.channel;

import org.rdmapanama.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A registered buffer of a {@link ChannelGroup}'s pool. Fill {@link #segment()}
 * and give it to {@link MessageChannel#send(MessageBuffer, int)}: the device
 * reads it where it is, and the pool takes it back once the peer has it.
 * A buffer not sent goes back with {@link #release()}. After either, the
 * buffer is no longer the caller's: {@link #segment()} and a second send or
 * release throw.
 */
public final class MessageBuffer extends LoopTask {
    static final int FREE = 0;
    static final int OWNED = 1;
    static final int SENDING = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(MessageBuffer.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final BufferPool.SizeClass sizeClass;
    final int index;
    /** The registered chunk it is part of, numbered across the pool (what ADVERTISE names once per channel). */
    final int chunk;
    final MemoryRegion region;
    /** Where the header starts in {@link #region}. */
    final long offset;
    /** Header and payload. */
    final MemorySegment whole;
    private final MemorySegment payload;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    private Object attachment; // kept across the buffer's uses: the pool's push and pop order its reads and writes

    // Free-list link (the pool's), and the fields a send carries to the loop thread.
    int nextFree;
    MessageBuffer queueNext;
    MessageChannel channel;
    int length;
    int wireType;
    /** Carries a user's send (DATA, or the RNDV of one): counted in its channel's pending sends until posted. */
    boolean user;

    MessageBuffer(BufferPool.SizeClass sizeClass, int index, int chunk, MemoryRegion region, long offset, int size) {
        this.sizeClass = sizeClass;
        this.index = index;
        this.chunk = chunk;
        this.region = region;
        this.offset = offset;
        this.whole = region.segment().asSlice(offset, size);
        this.payload = whole.asSlice(Wire.HEADER);
    }

    /** The payload: {@link #capacity()} bytes of registered memory. */
    public MemorySegment segment() {
        requireOwned("use");
        return payload;
    }

    public int capacity() {
        return (int) payload.byteSize();
    }

    /** A framework's object for this buffer (a view of it), kept while the buffer goes round the pool. */
    public void attach(Object value) {
        attachment = value;
    }

    public Object attachment() {
        return attachment;
    }

    /** Gives a buffer that will not be sent back to the pool. */
    public void release() {
        if (!STATE.compareAndSet(this, OWNED, FREE)) {
            throw new IllegalStateException("this buffer is not yours to release: it was already sent or released");
        }
        sizeClass.push(this);
    }

    void requireOwned(String what) {
        if (state != OWNED) {
            throw new IllegalStateException("cannot " + what + " this buffer: it was already sent or released");
        }
    }

    boolean transition(int from, int to) {
        return STATE.compareAndSet(this, from, to);
    }

    void setState(int to) {
        state = to;
    }

    /** Back to the pool from the loop (a send completed, or a channel let go of it). */
    void recycle() {
        state = FREE;
        channel = null;
        queueNext = null;
        user = false;
        sizeClass.push(this);
    }

    MemorySegment payloadView() {
        return payload;
    }

    long payloadAddress() {
        return region.address() + offset + Wire.HEADER;
    }
}

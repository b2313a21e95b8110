package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.ProtectionDomain;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A group's registered memory, in size classes of powers of two (256 B up
 * to the largest message plus its header). A class grows by registering a
 * chunk of several buffers, never one per message; a buffer goes back to its
 * class's free list, a lock-free stack, from any thread. Classes larger than
 * a receive slot are registered for remote read: their buffers go by
 * rendezvous, and the peer reads them.
 */
final class BufferPool implements AutoCloseable {
    static final int MIN_SIZE = 256;
    private static final long CHUNK_TARGET = 1 << 20;

    private final ProtectionDomain pd;
    private final SizeClass[] classes;
    private final long limit;
    private final AtomicLong registered = new AtomicLong();
    private final List<MemoryRegion> chunks = new ArrayList<>(); // guarded by this
    private volatile boolean closed;

    BufferPool(ProtectionDomain pd, int slotSize, int maxMessageSize, long limit) {
        this.pd = pd;
        this.limit = limit;
        int largest = Math.max(MIN_SIZE, Integer.highestOneBit(Math.max(1, maxMessageSize + Wire.HEADER - 1)) << 1);
        int n = Integer.numberOfTrailingZeros(largest) - Integer.numberOfTrailingZeros(MIN_SIZE) + 1;
        classes = new SizeClass[n];
        for (int i = 0; i < n; i++) {
            int size = MIN_SIZE << i;
            classes[i] = new SizeClass(size, size > slotSize);
        }
    }

    /** A buffer whose payload holds {@code bytes}; grows its class if it is empty. */
    MessageBuffer allocate(int bytes) throws RdmaException {
        if (bytes < 0) {
            throw new IllegalArgumentException("a buffer of " + bytes + " bytes");
        }
        long whole = (long) bytes + Wire.HEADER;
        int i = whole <= MIN_SIZE ? 0
                : 64 - Long.numberOfLeadingZeros(whole - 1) - Integer.numberOfTrailingZeros(MIN_SIZE);
        if (i >= classes.length) {
            throw new IllegalArgumentException("a buffer of " + bytes + " bytes is larger than the largest message, "
                    + (classes[classes.length - 1].size - Wire.HEADER) + " bytes");
        }
        MessageBuffer b = classes[i].pop();
        b.setState(MessageBuffer.OWNED);
        return b;
    }

    /** Registered bytes so far. */
    long registeredBytes() {
        return registered.get();
    }

    @Override
    public synchronized void close() throws RdmaException {
        closed = true;
        RdmaException first = null;
        for (int i = chunks.size() - 1; i >= 0; i--) {
            try {
                chunks.get(i).close();
            } catch (RdmaException e) {
                first = first == null ? e : first;
            }
        }
        chunks.clear();
        if (first != null) {
            throw first;
        }
    }

    final class SizeClass {
        final int size;
        final boolean remote;
        /** (tag << 32) | (index + 1) of the top; 0 = empty. The tag defeats ABA. */
        private final AtomicLong top = new AtomicLong();
        private volatile MessageBuffer[] all = new MessageBuffer[0];

        SizeClass(int size, boolean remote) {
            this.size = size;
            this.remote = remote;
        }

        BufferPool pool() {
            return BufferPool.this;
        }

        MessageBuffer pop() throws RdmaException {
            while (true) {
                long t = top.get();
                int i = (int) t - 1;
                if (i < 0) {
                    grow();
                    continue;
                }
                MessageBuffer b = all[i];
                if (top.compareAndSet(t, ((t >>> 32) + 1) << 32 | (b.nextFree + 1) & 0xffffffffL)) {
                    return b;
                }
            }
        }

        void push(MessageBuffer b) {
            while (true) {
                long t = top.get();
                b.nextFree = (int) t - 1;
                if (top.compareAndSet(t, ((t >>> 32) + 1) << 32 | (b.index + 1) & 0xffffffffL)) {
                    return;
                }
            }
        }

        /** Registers one more chunk, unless another thread just did. */
        private void grow() throws RdmaException {
            synchronized (BufferPool.this) {
                if ((int) top.get() != 0) {
                    return;
                }
                if (closed) {
                    throw new org.rdmapanama.error.ClosedResourceException("the channel group's buffer pool is closed");
                }
                int count = (int) Math.max(2, Math.min(256, CHUNK_TARGET / size));
                long bytes = (long) count * size;
                if (registered.get() + bytes > limit) {
                    throw new RdmaException("the channel group's buffer pool is exhausted: " + registered.get()
                            + " bytes registered, " + bytes + " more for " + size + "-byte buffers would pass its limit of "
                            + limit + "; give buffers and messages back, or raise the limit");
                }
                MemoryRegion mr = remote ? pd.allocate(bytes, Access.LOCAL_WRITE, Access.REMOTE_READ)
                        : pd.allocate(bytes, Access.LOCAL_WRITE);
                int chunk = chunks.size();
                chunks.add(mr);
                registered.addAndGet(bytes);
                MessageBuffer[] old = all;
                MessageBuffer[] grown = java.util.Arrays.copyOf(old, old.length + count);
                for (int k = 0; k < count; k++) {
                    grown[old.length + k] = new MessageBuffer(this, old.length + k, chunk, mr, (long) k * size, size);
                }
                all = grown; // published before any of them is pushed
                for (int k = count - 1; k >= 0; k--) {
                    push(grown[old.length + k]);
                }
            }
        }
    }
}

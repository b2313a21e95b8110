package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.WorkRequests;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The one receive WR with one SGE behind {@link QueuePair#postRecv(MemoryRegion, long, int, long)}
 * and its SRQ twin: built once in the queue's arena, filled and posted under
 * this object's lock, so that any thread may repost a buffer without
 * allocating. The provider copies the WR during the post, so the lock is held
 * only for that call.
 */
final class SingleReceive {
    private final MemorySegment wr;
    private final MemorySegment wrForCall; // global-scope alias: the queue's handle acquire covers this memory
    private final MemorySegment sge;

    SingleReceive(Arena memory) {
        this.wr = memory.allocate(WorkRequests.RECV_WR);
        this.sge = memory.allocate(WorkRequests.SGE);
        this.wrForCall = MemorySegment.ofAddress(wr.address());
        wr.set(ADDRESS, WorkRequests.RECV_NEXT, MemorySegment.NULL);
        wr.set(ADDRESS, WorkRequests.RECV_SG_LIST, sge);
        wr.set(JAVA_INT, WorkRequests.RECV_NUM_SGE, 1);
    }

    /**
     * Fills the WR and posts it through {@code fn} to {@code queue}: 0 or
     * -errno. A buffer outside {@code region}, or a region the device may not
     * write, is refused; a closed queue or region throws {@link ClosedResourceException}.
     */
    int post(NativeResource queue, MemorySegment fn, MemorySegment badWr, MemoryRegion region,
             long offset, int length, long wrId) {
        region.checkOpen();
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("receive buffer at " + offset + ", " + length + " bytes, is outside "
                    + region + " (" + region.length() + " bytes)");
        }
        if (!region.access().contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException("receive buffers need LOCAL_WRITE access: " + region);
        }
        try {
            synchronized (this) {
                wr.set(JAVA_LONG, WorkRequests.RECV_WR_ID, wrId);
                sge.set(JAVA_LONG, WorkRequests.SGE_ADDR, region.address() + offset);
                sge.set(JAVA_INT, WorkRequests.SGE_LENGTH, length);
                sge.set(JAVA_INT, WorkRequests.SGE_LKEY, region.lkey());
                return DataPath.post(fn, queue.handle(), wrForCall, badWr);
            }
        } catch (IllegalStateException e) {
            throw queue.translate(e); // the queue closed: its arena, and this memory with it
        }
    }
}

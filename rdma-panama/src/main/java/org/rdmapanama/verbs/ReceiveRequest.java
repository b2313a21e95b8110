package org.rdmapanama.verbs;

import org.rdmapanama.internal.WorkRequests;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A chain of {@code struct ibv_recv_wr} with their SGEs, built once and
 * reused for {@link QueuePair#postRecv} or {@link SharedReceiveQueue#postRecv}.
 * Setters allocate nothing. Not thread-safe. Its memory belongs to the QP or
 * SRQ that made it and is freed when that closes, so only that QP or SRQ
 * posts it: handing it to another would pass the provider memory that may
 * already be freed.
 */
public final class ReceiveRequest implements AutoCloseable {
    private static final long WR_SIZE = WorkRequests.RECV_WR_SIZE;
    private static final long SGE_SIZE = WorkRequests.SGE_SIZE;
    private static final long WR_ID = WorkRequests.RECV_WR_ID;
    private static final long NEXT = WorkRequests.RECV_NEXT;
    private static final long SG_LIST = WorkRequests.RECV_SG_LIST;
    private static final long NUM_SGE = WorkRequests.RECV_NUM_SGE;
    private static final long SGE_ADDR = WorkRequests.SGE_ADDR;
    private static final long SGE_LENGTH = WorkRequests.SGE_LENGTH;
    private static final long SGE_LKEY = WorkRequests.SGE_LKEY;

    final NativeResource owner;
    private final MemorySegment wrs;
    private final MemorySegment wrsForCall; // global-scope alias, see SendRequest
    private final MemorySegment sges;
    private final int capacity;
    private final int maxSge;

    ReceiveRequest(NativeResource owner, Arena memory, int chainLength, int maxSge, String ownerName) {
        if (chainLength < 1) {
            throw new IllegalArgumentException("chain length must be at least 1, got " + chainLength);
        }
        if (maxSge < 1) {
            throw new IllegalArgumentException("SGEs per receive WR must be at least 1 for " + ownerName + ", got " + maxSge);
        }
        this.owner = owner;
        this.capacity = chainLength;
        this.maxSge = maxSge;
        this.wrs = memory.allocate(WorkRequests.RECV_WR, chainLength);
        this.wrsForCall = MemorySegment.ofAddress(wrs.address());
        this.sges = memory.allocate(WorkRequests.SGE, (long) chainLength * maxSge);
        for (int i = 0; i < chainLength; i++) {
            wrs.set(ADDRESS, i * WR_SIZE + SG_LIST, sges.asSlice(i * maxSge * SGE_SIZE));
        }
        chain(1);
    }

    public int capacity() {
        return capacity;
    }

    /** Posts the first {@code n} WRs as one list. */
    public ReceiveRequest chain(int n) {
        Objects.checkIndex(n - 1, capacity);
        for (int i = 0; i < n; i++) {
            wrs.set(ADDRESS, i * WR_SIZE + NEXT, i + 1 < n ? wrs.asSlice((i + 1) * WR_SIZE) : MemorySegment.NULL);
        }
        return this;
    }

    public ReceiveRequest wrId(int i, long id) {
        wrs.set(JAVA_LONG, Objects.checkIndex(i, capacity) * WR_SIZE + WR_ID, id);
        return this;
    }

    public ReceiveRequest wrId(long id) {
        return wrId(0, id);
    }

    /** Receives into {@code length} bytes at {@code offset} of {@code mr}, as SGE {@code j} of WR {@code i}. */
    public ReceiveRequest sge(int i, int j, MemoryRegion mr, long offset, int length) {
        if (offset < 0 || length < 0 || offset > mr.length() - length) {
            throw new IndexOutOfBoundsException("SGE [" + offset + ", " + (offset + length) + ") outside the "
                    + mr.length() + "-byte memory region");
        }
        if (!mr.access().contains(Access.LOCAL_WRITE)) {
            throw new IllegalArgumentException("receive buffers need LOCAL_WRITE access");
        }
        long wr = Objects.checkIndex(i, capacity) * WR_SIZE;
        Objects.checkIndex(j, maxSge);
        long sge = (i * (long) maxSge + j) * SGE_SIZE;
        sges.set(JAVA_LONG, sge + SGE_ADDR, mr.address() + offset);
        sges.set(JAVA_INT, sge + SGE_LENGTH, length);
        sges.set(JAVA_INT, sge + SGE_LKEY, mr.lkey());
        wrs.set(JAVA_INT, wr + NUM_SGE, j + 1);
        return this;
    }

    public ReceiveRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(0, 0, mr, offset, length);
    }

    MemorySegment first() {
        return wrsForCall;
    }

    /** Nothing to free: the memory is the QP's or SRQ's. */
    @Override
    public void close() {
    }
}

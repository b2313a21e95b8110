package org.rdmapanama.verbs;

import org.rdmapanama.internal.WorkRequests;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A reusable array of {@code struct ibv_wc} that {@link CompletionQueue#poll}
 * fills. Reading it allocates nothing: every accessor reads native memory at a
 * fixed offset. Not thread-safe: one poller owns a batch.
 */
public final class CompletionBatch implements AutoCloseable {
    private static final long WC_SIZE = WorkRequests.WC_SIZE;
    private static final long WR_ID = WorkRequests.WC_WR_ID;
    private static final long STATUS = WorkRequests.WC_STATUS;
    private static final long OPCODE = WorkRequests.WC_OPCODE;
    private static final long VENDOR_ERR = WorkRequests.WC_VENDOR_ERR;
    private static final long BYTE_LEN = WorkRequests.WC_BYTE_LEN;
    private static final long IMM_DATA = WorkRequests.WC_IMM_DATA;
    private static final long QP_NUM = WorkRequests.WC_QP_NUM;
    private static final long SRC_QP = WorkRequests.WC_SRC_QP;
    private static final long WC_FLAGS = WorkRequests.WC_FLAGS;
    private static final int WITH_IMM = 2; // IBV_WC_WITH_IMM

    private final Arena arena;        // null when the memory is a CQ's
    private final CompletionQueue owner; // the CQ whose arena holds the memory, or null
    private final MemorySegment wc;
    private final MemorySegment wcForCall;
    private final int capacity;
    private int count;

    /** A batch with memory of its own (freed by {@link #close()}), usable with any CQ. */
    public CompletionBatch(int capacity) {
        this(check(capacity), Arena.ofShared(), null);
    }

    CompletionBatch(int capacity, Arena memory, CompletionQueue owner) {
        this.capacity = check(capacity);
        this.owner = owner;
        this.arena = owner == null ? memory : null;
        this.wc = memory.allocate(WorkRequests.WC, capacity);
        // Polling the owning CQ passes a global-scope alias: the CQ handle's
        // acquire already keeps this memory alive, which saves a second acquire.
        this.wcForCall = owner == null ? wc : MemorySegment.ofAddress(wc.address());
    }

    private static int check(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a completion batch needs room for at least 1 entry, got " + capacity);
        }
        return capacity;
    }

    public int capacity() {
        return capacity;
    }

    /** How many entries the last poll filled. */
    public int count() {
        return count;
    }

    /** What {@code cq}'s poll passes: the cheap alias for the owning CQ, else the scoped segment. */
    MemorySegment segmentFor(CompletionQueue cq) {
        return cq == owner ? wcForCall : wc;
    }

    /** Whether the memory is {@code cq}'s own, alive exactly as long as it. */
    boolean belongsTo(CompletionQueue cq) {
        return owner == cq;
    }

    /** The entries' address, for a caller that keeps the memory alive itself. */
    long address() {
        return wcForCall.address();
    }

    void filled(int n) {
        count = n;
    }

    private long at(int i) {
        return Objects.checkIndex(i, count) * WC_SIZE;
    }

    public long wrId(int i) {
        return wc.get(JAVA_LONG, at(i) + WR_ID);
    }

    public WcStatus status(int i) {
        return WcStatus.of(wc.get(JAVA_INT, at(i) + STATUS));
    }

    public boolean isSuccess(int i) {
        return wc.get(JAVA_INT, at(i) + STATUS) == 0;
    }

    public WcOpcode opcode(int i) {
        return WcOpcode.of(wc.get(JAVA_INT, at(i) + OPCODE));
    }

    public int vendorError(int i) {
        return wc.get(JAVA_INT, at(i) + VENDOR_ERR);
    }

    /** Bytes received, for receive completions (and RDMA Read on some providers). */
    public int byteLength(int i) {
        return wc.get(JAVA_INT, at(i) + BYTE_LEN);
    }

    public boolean hasImmediate(int i) {
        return (wc.get(JAVA_INT, at(i) + WC_FLAGS) & WITH_IMM) != 0;
    }

    /** The immediate data in host order (verbs carries it big-endian). */
    public int immediate(int i) {
        return Integer.reverseBytes(wc.get(JAVA_INT, at(i) + IMM_DATA));
    }

    public int qpNumber(int i) {
        return wc.get(JAVA_INT, at(i) + QP_NUM);
    }

    public int sourceQp(int i) {
        return wc.get(JAVA_INT, at(i) + SRC_QP);
    }

    /** Throws {@link WorkCompletionException} if entry {@code i} did not succeed. */
    public void requireSuccess(int i) throws WorkCompletionException {
        if (!isSuccess(i)) {
            throw new WorkCompletionException(status(i), wrId(i), opcode(i), vendorError(i));
        }
    }

    /** Frees a batch's own memory; a batch from {@link CompletionQueue#newBatch} is freed with its CQ. */
    @Override
    public void close() {
        if (arena != null && arena.scope().isAlive()) {
            arena.close();
        }
    }
}

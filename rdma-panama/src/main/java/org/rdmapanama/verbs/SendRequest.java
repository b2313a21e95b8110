package org.rdmapanama.verbs;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.internal.WorkRequests;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A chain of {@code struct ibv_send_wr} with their scatter/gather lists,
 * built once in native memory for one {@link QueuePair} and reused: set the
 * fields that change, then {@link QueuePair#postSend}. Setters write native
 * memory at fixed offsets and allocate nothing.
 * <p>
 * What the QP's transport or device cannot do is refused here, before
 * anything is posted: atomics where {@code atomic_cap} is NONE (iWARP),
 * immediate data on iWARP, more SGEs in an RDMA Read than {@code max_sge_rd},
 * RDMA and atomics on UD, inline sends above the QP's inline size.
 * <p>
 * Not thread-safe. Its memory belongs to the QP and is freed when the QP
 * closes (build requests once, not per operation); using it after that throws.
 * An {@link AddressHandle} set with {@link #ud} refuses to close while a WR
 * here points at it: until the WR gets another one, this request is closed,
 * or its QP is.
 */
public final class SendRequest implements AutoCloseable {
    private static final long WR_SIZE = WorkRequests.SEND_WR_SIZE;
    private static final long SGE_SIZE = WorkRequests.SGE_SIZE;
    private static final long WR_ID = WorkRequests.SEND_WR_ID;
    private static final long NEXT = WorkRequests.SEND_NEXT;
    private static final long SG_LIST = WorkRequests.SEND_SG_LIST;
    private static final long NUM_SGE = WorkRequests.SEND_NUM_SGE;
    private static final long OPCODE = WorkRequests.SEND_OPCODE;
    private static final long SEND_FLAGS = WorkRequests.SEND_FLAGS;
    private static final long IMM_DATA = WorkRequests.SEND_IMM_DATA;
    private static final long RDMA_REMOTE_ADDR = WorkRequests.RDMA_REMOTE_ADDR;
    private static final long RDMA_RKEY = WorkRequests.RDMA_RKEY;
    private static final long ATOMIC_REMOTE_ADDR = WorkRequests.ATOMIC_REMOTE_ADDR;
    private static final long ATOMIC_COMPARE_ADD = WorkRequests.ATOMIC_COMPARE_ADD;
    private static final long ATOMIC_SWAP = WorkRequests.ATOMIC_SWAP;
    private static final long ATOMIC_RKEY = WorkRequests.ATOMIC_RKEY;
    private static final long UD_AH = WorkRequests.UD_AH;
    private static final long UD_REMOTE_QPN = WorkRequests.UD_REMOTE_QPN;
    private static final long UD_REMOTE_QKEY = WorkRequests.UD_REMOTE_QKEY;
    private static final long SGE_ADDR = WorkRequests.SGE_ADDR;
    private static final long SGE_LENGTH = WorkRequests.SGE_LENGTH;
    private static final long SGE_LKEY = WorkRequests.SGE_LKEY;

    private static final int FLAG_FENCE = WorkRequests.FLAG_FENCE;
    private static final int FLAG_SIGNALED = WorkRequests.FLAG_SIGNALED;
    private static final int FLAG_SOLICITED = WorkRequests.FLAG_SOLICITED;
    private static final int FLAG_INLINE = WorkRequests.FLAG_INLINE;

    final QueuePair owner;
    private final MemorySegment wrs;
    // The same memory with global scope, for the downcall: the QP handle's
    // acquire keeps the QP's arena, and so this memory, alive during the call.
    private final MemorySegment wrsForCall;
    private final MemorySegment sges;
    private final int capacity;
    private final int maxSge;
    private final Opcode[] opcodes;
    private final boolean immediateData;
    private final boolean atomics;
    private final DeviceCapabilities caps;
    private final boolean ud;
    private final AddressHandle[] addressHandles; // per WR, held while the WR points at it
    private final Dependent[] wrUsers;            // each WR, as a user of its address handle
    volatile boolean closed;

    SendRequest(QueuePair qp, Arena memory, int chainLength, int maxSge) {
        if (chainLength < 1) {
            throw new IllegalArgumentException("chain length must be at least 1, got " + chainLength);
        }
        if (maxSge < 0 || maxSge > qp.maxSendSge()) {
            throw new IllegalArgumentException("SGEs per WR must be 0.." + qp.maxSendSge() + " (the QP's max_send_sge), got " + maxSge);
        }
        this.owner = qp;
        this.capacity = chainLength;
        this.maxSge = maxSge;
        this.wrs = memory.allocate(WorkRequests.SEND_WR, chainLength);
        this.wrsForCall = MemorySegment.ofAddress(wrs.address());
        this.sges = memory.allocate(WorkRequests.SGE, Math.max(1, (long) chainLength * maxSge));
        this.opcodes = new Opcode[chainLength];
        DeviceContext ctx = qp.context();
        this.immediateData = ctx.transport().supportsImmediateData();
        this.atomics = ctx.capabilities().supportsAtomics();
        this.caps = ctx.capabilities();
        this.ud = qp.type() == QueuePairType.UD;
        this.addressHandles = new AddressHandle[ud ? chainLength : 0];
        this.wrUsers = new Dependent[addressHandles.length];
        for (int i = 0; i < chainLength; i++) {
            long wr = i * WR_SIZE;
            wrs.set(ADDRESS, wr + SG_LIST, sges.asSlice(i * maxSge * SGE_SIZE));
            opcode(i, Opcode.SEND);
        }
        chain(1);
    }

    public int capacity() {
        return capacity;
    }

    /** Posts the first {@code n} WRs as one list (links {@code next} pointers). */
    public SendRequest chain(int n) {
        Objects.checkIndex(n - 1, capacity);
        for (int i = 0; i < n; i++) {
            wrs.set(ADDRESS, i * WR_SIZE + NEXT, i + 1 < n ? wrs.asSlice((i + 1) * WR_SIZE) : MemorySegment.NULL);
        }
        return this;
    }

    private long wr(int i) {
        return Objects.checkIndex(i, capacity) * WR_SIZE;
    }

    /** Sets the operation of WR {@code i}; refused if the transport or device cannot do it. */
    public SendRequest opcode(int i, Opcode op) {
        long wr = wr(i);
        if (op.atomic && !atomics) {
            throw new TransportCapabilityException(op + " refused: " + owner.context().device().name()
                    + " (" + owner.context().transport().displayName() + ") reports atomic_cap NONE");
        }
        if (op.immediate && !immediateData) {
            throw new TransportCapabilityException(op + " refused: iWARP (" + owner.context().device().name()
                    + ") has no immediate data");
        }
        if (op.remote && ud) {
            throw new TransportCapabilityException(op + " refused: a UD queue pair can only Send");
        }
        checkReadSges(op, wrs.get(JAVA_INT, wr + NUM_SGE));
        opcodes[i] = op;
        wrs.set(JAVA_INT, wr + OPCODE, op.code);
        return this;
    }

    public SendRequest opcode(Opcode op) {
        return opcode(0, op);
    }

    private void checkReadSges(Opcode op, int sgeCount) {
        if (op == Opcode.RDMA_READ && !caps.allowsReadSges(sgeCount)) {
            throw new TransportCapabilityException("RDMA Read with " + sgeCount + " SGEs refused: "
                    + owner.context().device().name() + " allows " + caps.maxSgeRd() + " (max_sge_rd)");
        }
        if (op.atomic && sgeCount > 1) {
            throw new IllegalArgumentException("an atomic WR takes exactly one 8-byte SGE, got " + sgeCount);
        }
    }

    public SendRequest wrId(int i, long id) {
        wrs.set(JAVA_LONG, wr(i) + WR_ID, id);
        return this;
    }

    public SendRequest wrId(long id) {
        return wrId(0, id);
    }

    /** IBV_SEND_SIGNALED: completes on the CQ even when the QP does not signal every send. */
    public SendRequest signaled(int i, boolean on) {
        return flag(i, FLAG_SIGNALED, on);
    }

    /** IBV_SEND_FENCE: WR {@code i} starts only after the earlier RDMA Reads and atomics on the QP have completed. */
    public SendRequest fence(int i, boolean on) {
        return flag(i, FLAG_FENCE, on);
    }

    public SendRequest solicited(int i, boolean on) {
        return flag(i, FLAG_SOLICITED, on);
    }

    /** IBV_SEND_INLINE: the data is copied at post time; refused above the QP's inline size. */
    public SendRequest inline(int i, boolean on) {
        if (on) {
            checkInline(i, totalLength(i));
        }
        return flag(i, FLAG_INLINE, on);
    }

    private SendRequest flag(int i, int bit, boolean on) {
        long at = wr(i) + SEND_FLAGS;
        int flags = wrs.get(JAVA_INT, at);
        wrs.set(JAVA_INT, at, on ? flags | bit : flags & ~bit);
        return this;
    }

    private void checkInline(int i, long bytes) {
        if (bytes > owner.maxInlineData()) {
            throw new IllegalArgumentException("inline send of " + bytes + " bytes exceeds the QP's max_inline_data of "
                    + owner.maxInlineData());
        }
    }

    private long totalLength(int i) {
        int n = wrs.get(JAVA_INT, wr(i) + NUM_SGE);
        long total = 0;
        for (int j = 0; j < n; j++) {
            total += Integer.toUnsignedLong(sges.get(JAVA_INT, (i * (long) maxSge + j) * SGE_SIZE + SGE_LENGTH));
        }
        return total;
    }

    /**
     * Sets SGE {@code j} of WR {@code i} to {@code length} bytes at {@code offset} in {@code mr}
     * and makes the WR use SGEs {@code 0..j}.
     */
    public SendRequest sge(int i, int j, MemoryRegion mr, long offset, int length) {
        if (offset < 0 || length < 0 || offset > mr.length() - length) {
            throw new IndexOutOfBoundsException("SGE [" + offset + ", " + (offset + length) + ") outside the "
                    + mr.length() + "-byte memory region");
        }
        return sge(i, j, mr.address() + offset, length, mr.lkey());
    }

    public SendRequest sge(MemoryRegion mr, long offset, int length) {
        return sge(0, 0, mr, offset, length);
    }

    /** Raw form: address, length and lkey as the device sees them. */
    public SendRequest sge(int i, int j, long address, int length, int lkey) {
        long wr = wr(i);
        Objects.checkIndex(j, maxSge);
        checkReadSges(opcodes[i], j + 1);
        long sge = (i * (long) maxSge + j) * SGE_SIZE;
        sges.set(JAVA_LONG, sge + SGE_ADDR, address);
        sges.set(JAVA_INT, sge + SGE_LENGTH, length);
        sges.set(JAVA_INT, sge + SGE_LKEY, lkey);
        wrs.set(JAVA_INT, wr + NUM_SGE, j + 1);
        if ((wrs.get(JAVA_INT, wr + SEND_FLAGS) & FLAG_INLINE) != 0) {
            checkInline(i, totalLength(i));
        }
        return this;
    }

    /** Uses only the first {@code n} SGEs of WR {@code i} (0: a zero-length send). */
    public SendRequest sgeCount(int i, int n) {
        if (n < 0 || n > maxSge) {
            throw new IllegalArgumentException("SGE count must be 0.." + maxSge + ", got " + n);
        }
        checkReadSges(opcodes[i], n);
        wrs.set(JAVA_INT, wr(i) + NUM_SGE, n);
        return this;
    }

    /** The peer memory of an RDMA Write or Read. */
    public SendRequest remote(int i, long remoteAddress, int rkey) {
        long wr = wr(i);
        wrs.set(JAVA_LONG, wr + RDMA_REMOTE_ADDR, remoteAddress);
        wrs.set(JAVA_INT, wr + RDMA_RKEY, rkey);
        return this;
    }

    public SendRequest remote(long remoteAddress, int rkey) {
        return remote(0, remoteAddress, rkey);
    }

    /**
     * The operands of an atomic: the 8-byte word at {@code remoteAddress};
     * {@code compareAdd} is the compare value (CAS) or the addend (FAA).
     */
    public SendRequest atomic(int i, long remoteAddress, int rkey, long compareAdd, long swap) {
        if ((remoteAddress & 7) != 0) {
            throw new IllegalArgumentException("atomic target must be 8-byte aligned: 0x" + Long.toHexString(remoteAddress));
        }
        long wr = wr(i);
        wrs.set(JAVA_LONG, wr + ATOMIC_REMOTE_ADDR, remoteAddress);
        wrs.set(JAVA_INT, wr + ATOMIC_RKEY, rkey);
        wrs.set(JAVA_LONG, wr + ATOMIC_COMPARE_ADD, compareAdd);
        wrs.set(JAVA_LONG, wr + ATOMIC_SWAP, swap);
        return this;
    }

    /** Immediate data (host order; sent big-endian as verbs requires). */
    public SendRequest immediate(int i, int value) {
        if (!immediateData) {
            throw new TransportCapabilityException("immediate data refused: iWARP (" + owner.context().device().name()
                    + ") has no immediate data");
        }
        wrs.set(JAVA_INT, wr(i) + IMM_DATA, Integer.reverseBytes(value));
        return this;
    }

    /** The destination of a UD send. */
    public SendRequest ud(int i, AddressHandle ah, int remoteQpn, int remoteQkey) {
        if (!ud) {
            throw new IllegalStateException("UD addressing on a " + owner.type() + " queue pair");
        }
        long wr = wr(i);
        if (ah.protectionDomain() != owner.protectionDomain()) {
            throw new IllegalArgumentException(ah + " belongs to another protection domain than " + owner);
        }
        if (closed) {
            throw new ClosedResourceException("this SendRequest of " + owner + " is closed");
        }
        if (addressHandles[i] != ah) {
            if (wrUsers[i] == null) {
                wrUsers[i] = new Dependent("WR " + i + " of a SendRequest of " + owner);
            }
            ah.hold(wrUsers[i]); // throws if the AH is closed: then nothing changed
            if (addressHandles[i] != null) {
                addressHandles[i].release(wrUsers[i]);
            }
            addressHandles[i] = ah;
        }
        wrs.set(ADDRESS, wr + UD_AH, ah.ah());
        wrs.set(JAVA_INT, wr + UD_REMOTE_QPN, remoteQpn);
        wrs.set(JAVA_INT, wr + UD_REMOTE_QKEY, remoteQkey);
        return this;
    }

    /** For the post only: valid while the owning QP's handle is held by the call. */
    MemorySegment first() {
        return wrsForCall;
    }

    /**
     * Lets go of the address handles its WRs point at; it cannot be posted
     * afterwards. The memory is the QP's and goes with it.
     */
    @Override
    public void close() {
        closed = true;
        releaseAddressHandles();
    }

    void releaseAddressHandles() {
        for (int i = 0; i < addressHandles.length; i++) {
            if (addressHandles[i] != null) {
                addressHandles[i].release(wrUsers[i]);
                addressHandles[i] = null;
            }
        }
    }
}

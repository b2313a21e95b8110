package org.rdmapanama.verbs;

/** {@code enum ibv_wr_opcode}: the operations a send work request can carry. */
public enum Opcode {
    RDMA_WRITE(0, true, false, false),
    RDMA_WRITE_WITH_IMM(1, true, true, false),
    SEND(2, false, false, false),
    SEND_WITH_IMM(3, false, true, false),
    RDMA_READ(4, true, false, false),
    ATOMIC_CMP_AND_SWP(5, true, false, true),
    ATOMIC_FETCH_AND_ADD(6, true, false, true);

    final int code;
    final boolean remote;
    final boolean immediate;
    final boolean atomic;

    Opcode(int code, boolean remote, boolean immediate, boolean atomic) {
        this.code = code;
        this.remote = remote;
        this.immediate = immediate;
        this.atomic = atomic;
    }

    /** Needs a remote address and rkey (RDMA and atomic operations). */
    public boolean isRemote() {
        return remote;
    }

    public boolean hasImmediate() {
        return immediate;
    }

    public boolean isAtomic() {
        return atomic;
    }
}

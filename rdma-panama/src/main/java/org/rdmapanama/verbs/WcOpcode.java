package org.rdmapanama.verbs;

/** {@code enum ibv_wc_opcode}: what a completion completed. */
public enum WcOpcode {
    SEND, RDMA_WRITE, RDMA_READ, COMP_SWAP, FETCH_ADD, BIND_MW, LOCAL_INV, TSO,
    RECV, RECV_RDMA_WITH_IMM, UNKNOWN;

    /** Maps the C value without allocating. */
    public static WcOpcode of(int code) {
        return switch (code) {
            case 0 -> SEND;
            case 1 -> RDMA_WRITE;
            case 2 -> RDMA_READ;
            case 3 -> COMP_SWAP;
            case 4 -> FETCH_ADD;
            case 5 -> BIND_MW;
            case 6 -> LOCAL_INV;
            case 7 -> TSO;
            case 128 -> RECV;
            case 129 -> RECV_RDMA_WITH_IMM;
            default -> UNKNOWN;
        };
    }

    /** True for the receive side (IBV_WC_RECV is bit 7, as verbs.h documents). */
    public boolean isReceive() {
        return this == RECV || this == RECV_RDMA_WITH_IMM;
    }
}

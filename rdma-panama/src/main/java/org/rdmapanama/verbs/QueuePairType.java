package org.rdmapanama.verbs;

/** {@code enum ibv_qp_type}, the two this runtime supports. */
public enum QueuePairType {
    /** Reliable Connected: every transport; the only one iWARP has. */
    RC(2),
    /** Unreliable Datagram: InfiniBand and RoCE; Send/Recv only, one MTU per message. */
    UD(4);

    final int code;

    QueuePairType(int code) {
        this.code = code;
    }
}

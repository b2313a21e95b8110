package org.rdmapanama.cm;

import java.util.Objects;

/**
 * How a connection ended: what {@link RdmaConnection#ended()} completes with,
 * once, whichever comes first.
 *
 * @param reason why
 * @param detail for a log: the event and device, or what {@link RdmaConnection#fail} was given
 */
public record ConnectionEnd(Reason reason, String detail) {
    public enum Reason {
        /** rdma_cm reported DISCONNECTED: the peer disconnected or closed (or this side disconnected). */
        DISCONNECTED,
        /** rdma_cm reported DEVICE_REMOVAL. */
        DEVICE_REMOVED,
        /** The layer above called {@link RdmaConnection#fail}: a failed completion, a fatal QP event. */
        FAILED,
        /** The connection was closed. */
        CLOSED
    }

    public ConnectionEnd {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
    }
}

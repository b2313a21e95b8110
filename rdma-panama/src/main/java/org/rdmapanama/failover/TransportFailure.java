package org.rdmapanama.failover;

import org.rdmapanama.cm.CmEventType;
import org.rdmapanama.cm.CmException;
import org.rdmapanama.verbs.AsyncEventType;
import org.rdmapanama.verbs.WcStatus;

import java.util.Objects;

/**
 * Why a connection attempt or an established connection failed, as
 * {@link TransportFailover} reports it. A service builds one from what it
 * saw on its connection ({@link #completion}, {@link #event},
 * {@link #asyncEvent}); the failover builds one from each failed attempt.
 *
 * @param reason what kind of failure
 * @param detail what exactly, in the words of the verb, event or completion
 * @param status the completion's status for {@link Reason#COMPLETION_ERROR}, else null
 */
public record TransportFailure(Reason reason, String detail, WcStatus status) {
    /** The kinds of failure, for code to branch on. */
    public enum Reason {
        /** The route's address belongs to a device of another transport (a configuration error). */
        WRONG_TRANSPORT,
        /** RDMA_CM_EVENT_ADDR_ERROR: no local device reaches the address. */
        ADDRESS_ERROR,
        /** RDMA_CM_EVENT_ROUTE_ERROR. */
        ROUTE_ERROR,
        /** RDMA_CM_EVENT_UNREACHABLE: the peer did not answer the connect request (RoCE: the CM's retries ran out). */
        UNREACHABLE,
        /** RDMA_CM_EVENT_REJECTED: nobody listens there (RoCE), or the peer refused. */
        REJECTED,
        /** rdma_connect failed at once (iWARP: the TCP connection was refused or could not be opened). */
        REFUSED,
        /** RDMA_CM_EVENT_CONNECT_ERROR. */
        CONNECT_ERROR,
        /** A setup step's deadline passed with no event. */
        TIMEOUT,
        /** RDMA_CM_EVENT_DEVICE_REMOVAL. */
        DEVICE_REMOVAL,
        /** A work completion with an error status (RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, ...). */
        COMPLETION_ERROR,
        /** RDMA_CM_EVENT_DISCONNECTED on an established connection. */
        DISCONNECTED,
        /** A fatal asynchronous event on the queue pair (IBV_EVENT_QP_FATAL, ...). */
        QP_FATAL,
        /** Anything else (a verb that failed, a closed object). */
        OTHER
    }

    public TransportFailure {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
        if ((reason == Reason.COMPLETION_ERROR) != (status != null)) {
            throw new IllegalArgumentException("a completion status goes with COMPLETION_ERROR, and only with it");
        }
    }

    public TransportFailure(Reason reason, String detail) {
        this(reason, detail, null);
    }

    /** A work completion that failed with {@code status}. */
    public static TransportFailure completion(WcStatus status) {
        return new TransportFailure(Reason.COMPLETION_ERROR, status.describe(), status);
    }

    /** A connection event on an established connection (DISCONNECTED, DEVICE_REMOVAL). */
    public static TransportFailure event(CmEventType type) {
        return new TransportFailure(type == CmEventType.DEVICE_REMOVAL ? Reason.DEVICE_REMOVAL
                : type == CmEventType.DISCONNECTED ? Reason.DISCONNECTED : Reason.OTHER, type.cName());
    }

    /** An asynchronous event on the connection's queue pair. */
    public static TransportFailure asyncEvent(AsyncEventType type) {
        return new TransportFailure(type.isError() ? Reason.QP_FATAL : Reason.OTHER, "IBV_EVENT_" + type.name());
    }

    /** What a failed setup step threw. */
    public static TransportFailure of(Throwable e) {
        String detail = String.valueOf(e.getMessage());
        if (!(e instanceof CmException c)) {
            return new TransportFailure(Reason.OTHER, detail);
        }
        if (c.isTimeout()) {
            return new TransportFailure(Reason.TIMEOUT, detail);
        }
        if (c.event() == null) {
            // rdma_connect's own errno (iWARP opens its TCP connection in the call); else the loop or a cancel.
            return new TransportFailure(c.errno() != 0 ? Reason.REFUSED : Reason.OTHER, detail);
        }
        return new TransportFailure(switch (c.event()) {
            case ADDR_ERROR -> Reason.ADDRESS_ERROR;
            case ROUTE_ERROR -> Reason.ROUTE_ERROR;
            case UNREACHABLE -> Reason.UNREACHABLE;
            case REJECTED -> Reason.REJECTED;
            case CONNECT_ERROR -> Reason.CONNECT_ERROR;
            case DEVICE_REMOVAL -> Reason.DEVICE_REMOVAL;
            case DISCONNECTED -> Reason.DISCONNECTED;
            default -> Reason.OTHER;
        }, detail);
    }

    /**
     * Whether another transport may do better: the link, the peer's device
     * or the path failed. A remote access or a local protection error would
     * fail the same way anywhere (the request is wrong), so it never moves
     * a connection; nor does a wrong route, which is for its owner to fix.
     */
    public boolean isTransportError() {
        return switch (reason) {
            case WRONG_TRANSPORT, OTHER -> false;
            case COMPLETION_ERROR -> switch (status) {
                case RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, RESP_TIMEOUT_ERR, FATAL_ERR, GENERAL_ERR,
                     // Flushed: the QP is in ERR already, for a reason another completion or event carried.
                     WR_FLUSH_ERR,
                     // rxe's word for a packet it could not send (its interface down, no route); a malformed
                     // work request says the same, but the runtime refuses those before they are posted.
                     LOC_QP_OP_ERR -> true;
                default -> false;
            };
            default -> true;
        };
    }

    @Override
    public String toString() {
        return reason + " (" + detail + ")";
    }
}

package org.rdmapanama.verbs;

/** {@code enum ibv_event_type}: what a device reports on its asynchronous event queue. */
public enum AsyncEventType {
    CQ_ERR, QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR, DEVICE_FATAL,
    PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, SRQ_ERR, SRQ_LIMIT_REACHED, QP_LAST_WQE_REACHED,
    CLIENT_REREGISTER, GID_CHANGE, WQ_FATAL, UNKNOWN;

    /** Maps the C value; unknown values map to {@link #UNKNOWN}, never throw. */
    public static AsyncEventType of(int ibvEventType) {
        AsyncEventType[] all = values();
        return ibvEventType >= 0 && ibvEventType < UNKNOWN.ordinal() ? all[ibvEventType] : UNKNOWN;
    }

    /** Whether the event means something broke (a queue, a port, the device), not just changed. */
    public boolean isError() {
        return switch (this) {
            case CQ_ERR, QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, PATH_MIG_ERR, DEVICE_FATAL, PORT_ERR, SRQ_ERR,
                 WQ_FATAL -> true;
            default -> false;
        };
    }

    /** Whether the event moved its QP to the error state (an affiliated asynchronous error). */
    boolean isQpFatal() {
        return this == QP_FATAL || this == QP_REQ_ERR || this == QP_ACCESS_ERR;
    }

    /** Which member of the C event's {@code element} union names the object. */
    enum Element { CQ, QP, SRQ, WQ, PORT, NONE }

    Element element() {
        return switch (this) {
            case CQ_ERR -> Element.CQ;
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR,
                 QP_LAST_WQE_REACHED -> Element.QP;
            case SRQ_ERR, SRQ_LIMIT_REACHED -> Element.SRQ;
            case WQ_FATAL -> Element.WQ;
            case PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE -> Element.PORT;
            default -> Element.NONE;
        };
    }
}

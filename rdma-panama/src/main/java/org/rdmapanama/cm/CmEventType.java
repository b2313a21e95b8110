package org.rdmapanama.cm;

/** {@code enum rdma_cm_event_type}, in C order (ordinal = C value). */
public enum CmEventType {
    ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE,
    CONNECT_ERROR, UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL,
    MULTICAST_JOIN, MULTICAST_ERROR, ADDR_CHANGE, TIMEWAIT_EXIT, UNKNOWN;

    static CmEventType of(int code) {
        return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
    }

    /** rdma_event_str's spelling, e.g. {@code RDMA_CM_EVENT_REJECTED}. */
    public String cName() {
        return "RDMA_CM_EVENT_" + name();
    }
}

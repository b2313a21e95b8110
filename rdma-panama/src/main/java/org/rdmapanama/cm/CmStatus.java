package org.rdmapanama.cm;

import org.rdmapanama.internal.Errno;

/** What an rdma_cm event's status says, in words: an errno, or an IB CM reject reason. */
final class CmStatus {
    private CmStatus() {}

    /** " (reject reason 8: ...)", " (status -110: ...)", or "" for status 0. */
    static String describe(CmEvent ev) {
        if (ev.status() == 0) {
            return "";
        }
        return ev.type() == CmEventType.REJECTED
                ? " (reject reason " + ev.status() + rejectReason(ev.status()) + ")"
                : " (status " + ev.status() + ": " + Errno.describe(-ev.status()) + ")";
    }

    /** The IB CM reject reasons a user meets (IBTA table 112), and iWARP's "connection refused". */
    static String rejectReason(int status) {
        return switch (status) {
            case 8 -> ": invalid service ID, nobody listens on that port";
            case 28 -> ": consumer defined, the peer rejected the connection";
            case -111, 111 -> ": connection refused, nobody listens on that port";
            default -> "";
        };
    }
}

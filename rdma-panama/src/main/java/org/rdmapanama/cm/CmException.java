package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;



/**
 * Connection setup or a connection failed: an error event (ADDR_ERROR,
 * ROUTE_ERROR, UNREACHABLE, REJECTED, CONNECT_ERROR, DEVICE_REMOVAL), an
 * unexpected one, or a timeout.
 */
public final class CmException extends RdmaException {
    private final CmEventType event;
    private final boolean timeout;

    /**
     * @param status the event's status, or a failed call's result: -errno, or
     *               (REJECTED) a positive reject reason, which is no errno
     */
    CmException(String message, CmEventType event, int status) {
        this(message, event, status, false);
    }

    private CmException(String message, CmEventType event, int status, boolean timeout) {
        super(event == null ? "rdma_get_cm_event" : event.cName(), status < 0 ? -status : 0, message);
        this.event = event;
        this.timeout = timeout;
    }

    /** A setup step's own deadline passed with no event. */
    static CmException timeout(String message) {
        return new CmException(message, null, 0, true);
    }

    /**
     * Whether the wait ended because its timeout passed (no event came), not
     * because of an event or a refused call: what failover reports as TIMEOUT.
     */
    public boolean isTimeout() {
        return timeout;
    }

    /** The event that ended the wait, or null for a timeout or a call that failed at once (see {@link #errno()}). */
    public CmEventType event() {
        return event;
    }
}

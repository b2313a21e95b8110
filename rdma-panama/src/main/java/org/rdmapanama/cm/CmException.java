package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

/**
 * Connection setup or a connection failed: an error event (ADDR_ERROR,
 * ROUTE_ERROR, UNREACHABLE, REJECTED, CONNECT_ERROR, DEVICE_REMOVAL), an
 * unexpected one, or a timeout.
 */
public final class CmException extends RdmaException {
    private final CmEventType event;

    CmException(String message, CmEventType event, int status) {
        super(event == null ? "rdma_get_cm_event" : event.cName(), Math.abs(status), message);
        this.event = event;
    }

    /** The event that ended the wait, or null for a timeout or a call that failed at once (see {@link #errno()}). */
    public CmEventType event() {
        return event;
    }
}

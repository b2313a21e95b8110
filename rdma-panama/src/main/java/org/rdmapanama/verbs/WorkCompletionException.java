package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;

/** A work request completed with an error status. It lives here, not in error, because it carries a {@link WcStatus}. */
public final class WorkCompletionException extends RdmaException {
    private final WcStatus status;
    private final long wrId;

    public WorkCompletionException(WcStatus status, long wrId, WcOpcode opcode, int vendorError) {
        super("ibv_poll_cq", 0, "work request " + wrId + " (" + opcode + ") failed: " + status.describe()
                + (vendorError != 0 ? ", vendor error 0x" + Integer.toHexString(vendorError) : ""));
        this.status = status;
        this.wrId = wrId;
    }

    public WcStatus status() {
        return status;
    }

    public long wrId() {
        return wrId;
    }
}

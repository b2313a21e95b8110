package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A peer's connect request that a {@link RdmaListener} handed over before
 * making anything for it: its taker reads the private data, then {@link #open}s
 * it into a connection (its QP on the resources it chooses) or
 * {@link #reject}s it. One of the two, once.
 */
public final class ConnectRequest {
    private final RdmaListener listener;
    private final CmEvent event;
    private final CmEndpoint events;
    private final AtomicBoolean taken = new AtomicBoolean();

    ConnectRequest(RdmaListener listener, CmEvent event, CmEndpoint events) {
        this.listener = listener;
        this.event = event;
        this.events = events;
    }

    /** What the peer sent with its request. */
    public byte[] privateData() {
        return event.privateData().clone();
    }

    /**
     * The request as a connection with its QP on {@code shared}'s PD, CQs and SRQ (null: its own), not
     * accepted yet: {@link RdmaConnection#accept} or {@link RdmaConnection#reject} it.
     */
    public RdmaConnection open(SharedResources shared) throws RdmaException {
        take();
        return listener.fromRequest(events, event, shared);
    }

    /** Refuses the peer (destroying the request's cm_id rejects it). */
    public void reject() {
        if (taken.compareAndSet(false, true)) {
            listener.refuse(event, events);
        }
    }

    private void take() {
        if (!taken.compareAndSet(false, true)) {
            throw new IllegalStateException("this connect request was already opened or rejected");
        }
    }

    @Override
    public String toString() {
        return "connect request on " + listener.address();
    }
}

package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;

import java.time.Duration;

/** A connection's blocking waits for its events, off the event loop's thread. */
final class EventWaits {
    private EventWaits() {}

    /** The next event of {@code c}, or null after {@code timeout}; DISCONNECTED or DEVICE_REMOVAL end it. */
    static CmEventType next(RdmaConnection c, Duration timeout) throws RdmaException, InterruptedException {
        c.loop.refuseBlockingOnLoop("await an event");
        CmEvent ev = c.events.nextWithin(timeout);
        if (ev == null) {
            return null;
        }
        if (ev.type() == CmEventType.DISCONNECTED || ev.type() == CmEventType.DEVICE_REMOVAL) {
            c.state = RdmaConnection.State.DISCONNECTED;
            c.ending.flush(ev.type().cName());
        }
        return ev.type();
    }

    /** Waits up to {@code timeout} for the peer to disconnect; true if it did. */
    static boolean disconnect(RdmaConnection c, Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (c.state != RdmaConnection.State.DISCONNECTED) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || next(c, Duration.ofNanos(left)) == null) {
                return c.state == RdmaConnection.State.DISCONNECTED;
            }
        }
        return true;
    }
}

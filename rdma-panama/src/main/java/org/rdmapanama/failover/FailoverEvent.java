package org.rdmapanama.failover;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;

/**
 * One thing {@link TransportFailover} did or saw, in the order it happened:
 * an attempt that failed, one that came up, or an established connection
 * that failed (and whether a reconnect follows).
 *
 * @param kind        what happened
 * @param at          when it was reported
 * @param attempt     the attempt's number (1, 2, ... over the failover's life), or 0 for a connection failure
 * @param route       the route tried, or the route the failed connection was on
 * @param device      the local device the attempt or connection used, or null where none was resolved
 * @param took        how long the attempt took; for a connection failure, how long the connection had been up
 * @param failure     why it failed, or null for {@link Kind#ESTABLISHED}
 * @param reconnecting for {@link Kind#CONNECTION_FAILED}: a reconnect on another route follows
 */
public record FailoverEvent(Kind kind, Instant at, int attempt, TransportRoute route, String device, Duration took,
                            TransportFailure failure, boolean reconnecting) {
    public enum Kind {
        /** A route could not be set up; the next one is tried (or, with none left, the failover gives up). */
        ATTEMPT_FAILED,
        /** A route came up: the connection is on it. */
        ESTABLISHED,
        /** An established connection failed: reported by its owner with {@link TransportFailover#failed}. */
        CONNECTION_FAILED
    }

    @Override
    public String toString() {
        String time = LocalTime.ofInstant(at, ZoneId.systemDefault()).truncatedTo(ChronoUnit.MILLIS).toString();
        String on = device == null ? "" : " on " + device;
        return time + " " + switch (kind) {
            case ATTEMPT_FAILED -> "attempt " + attempt + ": " + route + on + " failed after " + took.toMillis()
                    + " ms: " + failure;
            case ESTABLISHED -> "attempt " + attempt + ": " + route + " established" + on + " in " + took.toMillis()
                    + " ms";
            case CONNECTION_FAILED -> "connection " + route + on + " failed after " + took.toMillis() + " ms up: "
                    + failure + (reconnecting ? "; reconnecting on the next route"
                    : failure.isTransportError() ? "; reported only (reconnect is off)"
                    : "; not a transport error, so no other route would help: reported only");
        };
    }
}

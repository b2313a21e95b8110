package org.rdmapanama.failover;

import org.rdmapanama.cm.ConnectionOptions;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link TransportFailover} connects and what it does when a connection fails.
 *
 * @param options        the queue pair and connection parameters of every connection it makes
 * @param attemptTimeout the budget of one attempt: resolve, the caller's setup, and connect
 * @param reconnect      when an established connection fails with a transport error, connect on
 *                       the next route (true), or only report it (false)
 */
public record FailoverPolicy(ConnectionOptions options, Duration attemptTimeout, boolean reconnect) {
    public FailoverPolicy {
        Objects.requireNonNull(options, "options");
        if (attemptTimeout.isNegative() || attemptTimeout.isZero()) {
            throw new IllegalArgumentException("attemptTimeout must be positive, got " + attemptTimeout);
        }
    }

    /**
     * Default connection options but 6 transport retries (with 7, rxe retries
     * forever and a dead link never fails the QP), 30 s an attempt, report only.
     */
    public static FailoverPolicy defaults() {
        return new FailoverPolicy(ConnectionOptions.defaults().withRetry(6), Duration.ofSeconds(30), false);
    }

    public FailoverPolicy withOptions(ConnectionOptions o) {
        return new FailoverPolicy(o, attemptTimeout, reconnect);
    }

    public FailoverPolicy withAttemptTimeout(Duration t) {
        return new FailoverPolicy(options, t, reconnect);
    }

    public FailoverPolicy withReconnect(boolean on) {
        return new FailoverPolicy(options, attemptTimeout, on);
    }
}

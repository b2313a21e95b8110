package org.rdmapanama.failover;


import org.rdmapanama.error.RdmaException;
import java.util.List;

/**
 * No route was left to connect on: every attempt failed. The message lists
 * each attempt with its route and why it failed; {@link #attempts()} has them
 * for code.
 */
public final class FailoverException extends RdmaException {
    private final transient List<FailoverEvent> attempts;

    FailoverException(String what, List<FailoverEvent> attempts) {
        super(what + "; " + describe(attempts));
        this.attempts = List.copyOf(attempts);
    }

    private static String describe(List<FailoverEvent> attempts) {
        if (attempts.isEmpty()) {
            return "no route was left to try";
        }
        StringBuilder sb = new StringBuilder("tried:");
        for (FailoverEvent e : attempts) {
            sb.append(" attempt ").append(e.attempt()).append(", ").append(e.route()).append(": ").append(e.failure())
                    .append(';');
        }
        sb.setLength(sb.length() - 1);
        return sb.toString();
    }

    /** The failed attempts, in order. */
    public List<FailoverEvent> attempts() {
        return attempts;
    }
}

package org.rdmapanama.channel;

import org.rdmapanama.error.RdmaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Closing several native owners in order: every one is tried, the first failure is kept. */
final class Closer {
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(Closer.class);
    }

    private Closer() {}

    /** Closes each of {@code all} in order; returns {@code first}, or else the first failure among them. */
    static RdmaException closeAll(RdmaException first, AutoCloseable... all) {
        for (AutoCloseable c : all) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (RdmaException e) {
                first = first == null ? e : first;
            } catch (Exception e) {
                throw new IllegalStateException("closing " + c, e);
            }
        }
        return first;
    }

    /** For a path that already fails: a failure to close is logged (what stays open is a leak), not thrown. */
    static void quietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            Log.LOG.warn("closing {}: {}", c, e.toString());
        }
    }
}

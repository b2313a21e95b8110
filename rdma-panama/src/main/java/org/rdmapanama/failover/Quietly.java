package org.rdmapanama.failover;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Closing what a failed or broken path leaves behind, where another failure is the one to report. */
final class Quietly {
    private Quietly() {}

    // Held lazily: a run that logs nothing never starts slf4j.
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(Quietly.class);
    }

    /** Closes {@code c} if not null; a checked failure is logged at debug, an unchecked one (left open) at warn. */
    static void close(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                Log.LOG.warn("while cleaning up {}, left open: {}", c, e.toString());
            } catch (Exception e) {
                Log.LOG.debug("while cleaning up {}: {}", c, e.toString());
            }
        }
    }
}

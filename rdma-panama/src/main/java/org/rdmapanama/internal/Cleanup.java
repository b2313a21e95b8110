package org.rdmapanama.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Closing what a failed setup leaves behind, where the setup's own failure is the one to report. */
public final class Cleanup {
    private Cleanup() {}

    // Held lazily: a run that logs nothing never starts slf4j, whose provider lookup and
    // configuration are a large part of a server's start-up.
    private static final class Log {
        static final Logger LOG = LoggerFactory.getLogger(Cleanup.class);
    }

    /**
     * Closes {@code c} if not null. A checked failure (the C side's: the object
     * is closed anyway) is logged at debug; an unchecked one (busy, still in use:
     * the object stays open, and nobody here closes it again) at warn.
     */
    public static void closeQuietly(AutoCloseable c) {
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

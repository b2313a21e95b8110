package org.rdmapanama.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Closing what a failed setup leaves behind, where the setup's own failure is the one to report. */
public final class Cleanup {
    private Cleanup() {}

    private static final Logger log = LoggerFactory.getLogger(Cleanup.class);

    /** Closes {@code c} if not null; a failure is logged at debug and otherwise dropped. */
    public static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                log.debug("while cleaning up {}: {}", c, e.toString());
            }
        }
    }
}

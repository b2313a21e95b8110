package org.rdmapanama.error;

import java.io.IOException;

/**
 * A verb or rdma_cm call failed. Carries the C function's name and the errno
 * it reported, so that a log line says exactly what the kernel refused.
 */
public class RdmaException extends IOException {
    private final String verb;
    private final int errno;

    public RdmaException(String verb, int errno, String message) {
        super(message);
        this.verb = verb;
        this.errno = errno;
    }

    public RdmaException(String message) {
        this(null, 0, message);
    }

    public RdmaException(String message, Throwable cause) {
        super(message, cause);
        this.verb = null;
        this.errno = 0;
    }

    /** The C function that failed, such as {@code ibv_open_device}, or null. */
    public String verb() {
        return verb;
    }

    /** The errno it reported, or 0 when there was none. */
    public int errno() {
        return errno;
    }

    /**
     * The failure behind the {@code CompletionException} or
     * {@code ExecutionException} that an asynchronous call's future wraps it in.
     */
    public static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.CompletionException
                || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}

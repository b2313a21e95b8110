package org.rdmapanama.error;

/**
 * A resource was used after {@code close()} (or after its owner closed it).
 * Thrown instead of touching freed native memory.
 */
public final class ClosedResourceException extends IllegalStateException {
    public ClosedResourceException(String message) {
        super(message);
    }

    public ClosedResourceException(String message, Throwable cause) {
        super(message, cause);
    }
}

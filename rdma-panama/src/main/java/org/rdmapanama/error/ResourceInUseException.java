package org.rdmapanama.error;

/**
 * {@code NativeResource.close()} was refused because another resource still
 * depends on this one (a queue pair on its completion queue, a send request on
 * an address handle). Nothing was freed; close the dependents first.
 */
public class ResourceInUseException extends IllegalStateException {
    public ResourceInUseException(String message) {
        super(message);
    }

    public ResourceInUseException(String message, Throwable cause) {
        super(message, cause);
    }
}

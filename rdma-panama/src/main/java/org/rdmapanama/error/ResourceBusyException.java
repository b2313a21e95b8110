package org.rdmapanama.error;

/**
 * {@code NativeResource.close(Duration)} gave up: a call on another
 * thread (a post, a poll, a wait on a channel) kept using the resource for
 * longer than the close was allowed to wait. Nothing was freed under that
 * call; the resource stays open and the close may be tried again.
 */
public class ResourceBusyException extends IllegalStateException {
    public ResourceBusyException(String message, Throwable cause) {
        super(message, cause);
    }
}

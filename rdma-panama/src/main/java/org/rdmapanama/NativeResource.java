package org.rdmapanama;

import org.rdmapanama.error.RdmaException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A native object (context, PD, MR, CQ, QP, ...) owned by one shared
 * {@link Arena}. Its handle segment is scoped to that arena, so once the arena
 * is closed any call that passes the handle fails with an exception instead of
 * reaching freed memory, and closing while a call on another thread is using
 * the handle fails instead of freeing it under that call.
 * <p>
 * Children (a QP of a PD, an MR of a PD, a PD of a context) are closed, newest
 * first, before their owner. {@code close()} is idempotent and thread-safe.
 */
public abstract class NativeResource implements AutoCloseable {
    private final String description;
    private final Arena arena;
    private final MemorySegment handle;
    private final long address;
    private final NativeResource owner;
    private final Deque<NativeResource> children = new ArrayDeque<>();
    private final List<NativeResource> users = new ArrayList<>();
    private boolean closed;

    /**
     * @param description what error messages call it, e.g. {@code "QueuePair 17 on rxe0"}
     * @param raw         the C pointer, NULL-checked by the caller
     * @param size        the size of the C struct, so fields can be read
     * @param owner       the resource this one belongs to, or null
     */
    protected NativeResource(String description, MemorySegment raw, long size, NativeResource owner) {
        this.description = description;
        this.arena = Arena.ofShared();
        this.handle = raw.reinterpret(size, arena, null);
        this.address = raw.address();
        this.owner = owner;
        if (owner != null) {
            owner.adopt(this);
        }
    }

    /** The handle, valid until close; passing it to a downcall after close throws. */
    protected final MemorySegment handle() {
        return handle;
    }

    /** The arena that lives exactly as long as this resource, for its own native buffers. */
    protected final Arena arena() {
        return arena;
    }

    protected final String description() {
        return description;
    }

    public final synchronized boolean isClosed() {
        return closed;
    }

    /** Throws {@link ClosedResourceException} if this resource is closed. */
    protected final void checkOpen() {
        if (isClosed()) {
            throw closedError();
        }
    }

    protected final ClosedResourceException closedError() {
        return new ClosedResourceException(description + " is closed");
    }

    /**
     * Turns the JDK's "already closed" {@link IllegalStateException} from a
     * dead arena into a {@link ClosedResourceException}, on hot paths that
     * make no explicit check.
     */
    protected final RuntimeException translate(IllegalStateException e) {
        return isClosed() ? new ClosedResourceException(description + " is closed", e) : e;
    }

    private synchronized void adopt(NativeResource child) {
        if (closed) {
            throw closedError();
        }
        children.push(child);
    }

    private synchronized void disown(NativeResource child) {
        children.remove(child);
    }

    /** Records that {@code user} depends on this (a QP on its CQs); closing this is refused meanwhile. */
    protected final synchronized void addUser(NativeResource user) {
        if (closed) {
            throw closedError();
        }
        users.add(user);
    }

    protected final synchronized void removeUser(NativeResource user) {
        users.remove(user);
    }

    @Override
    public final void close() throws RdmaException {
        List<NativeResource> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!users.isEmpty()) {
                throw new StillUsedException(description + " is still used by " + users.getFirst().description
                        + (users.size() > 1 ? " and " + (users.size() - 1) + " more" : "") + "; close those first");
            }
            toClose = new ArrayList<>(children); // newest first
        }
        RdmaException failure = null;
        // Newest first, but a child still used by a sibling's descendant (a CQ
        // used by a QP of a PD) waits for a later pass, after that user closed.
        while (!toClose.isEmpty()) {
            List<NativeResource> refused = new ArrayList<>();
            for (NativeResource child : toClose) {
                try {
                    child.close();
                } catch (RdmaException e) {
                    failure = failure == null ? e : failure;
                } catch (StillUsedException stillUsed) {
                    refused.add(child);
                }
            }
            if (refused.size() == toClose.size()) {
                throw new IllegalStateException(description + " cannot close " + refused.getFirst().description
                        + ": it is still used by a resource of another owner");
            }
            toClose = refused;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                arena.close(); // fails while another thread is inside a call using the handle
            } catch (IllegalStateException busy) {
                throw new IllegalStateException(description + " is in use by another thread; not closed", busy);
            }
            closed = true;
        }
        try {
            destroy(MemorySegment.ofAddress(address));
        } catch (RdmaException e) {
            failure = failure == null ? e : failure;
        } finally {
            if (owner != null) {
                owner.disown(this);
            }
            released();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Closing was refused because another resource still depends on this one. */
    static final class StillUsedException extends IllegalStateException {
        StillUsedException(String message) {
            super(message);
        }
    }

    /** Frees the C object; {@code raw} is the unscoped pointer (the arena is already closed). */
    protected abstract void destroy(MemorySegment raw) throws RdmaException;

    /** Hook after destroy, for releasing dependencies (a QP's hold on its CQs). */
    protected void released() {
    }

    @Override
    public String toString() {
        return description + (isClosed() ? " (closed)" : "");
    }
}

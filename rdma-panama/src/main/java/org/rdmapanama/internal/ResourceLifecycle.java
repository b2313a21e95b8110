package org.rdmapanama.internal;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceBusyException;
import org.rdmapanama.error.ResourceInUseException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The life of one native object: its ownership (one shared {@link Arena}, or,
 * guarded, a count of the calls in flight), its children and dependents, and
 * its close, which closes the children newest first, waits for calls on other
 * threads, then frees the C object. The public contract and its outcomes are
 * {@code org.rdmapanama.verbs.NativeResource}'s; this is the engine behind it,
 * and behind the cm objects, which are not verbs objects.
 * <p>
 * A guarded object has no arena: every use of its handle runs between
 * {@link #enter()} and {@link #leave()}, and its close waits for that count
 * to reach zero as an arena's close would. Closing a shared arena is a
 * handshake with every Java thread, paid per resource: guarding is for those
 * that hand no memory of their own to Java and are not on the data path.
 */
public final class ResourceLifecycle {
    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    static final int CLOSED = 2;

    /** What the object's owner does at the steps of its life. */
    public interface Hooks {
        /** Frees the C object; {@code raw} is unscoped (the arena is closed, or no call is in flight). */
        void destroy(MemorySegment raw) throws RdmaException;

        /** After destroy: releasing dependencies (a QP's hold on its CQs). */
        default void released() {
        }

        /** After the object is registered with its owner: the place to let others see it. */
        default void opened() {
        }
    }

    /** Uses a handle (see {@link #withHandle}). */
    @FunctionalInterface
    public interface HandleUse<R> {
        R use(MemorySegment handle) throws RdmaException;
    }

    private final String description;
    private final Arena arena;
    private final MemorySegment handle;
    final long address;
    private final ResourceLifecycle owner;
    private final Hooks hooks;
    private final Deque<ResourceLifecycle> children = new ArrayDeque<>(); // guarded by this
    private final List<Object> users = new ArrayList<>();                 // guarded by this
    private final ReentrantLock closing = new ReentrantLock();           // one close at a time
    volatile int state = OPEN;
    @SuppressWarnings("unused") // through CALLS
    private volatile int calls;   // guarded objects: calls between enter() and leave()

    private static final VarHandle CALLS;

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(ResourceLifecycle.class, "calls", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * @param description what error messages call it, e.g. {@code "QueuePair 17 on rxe0"}
     * @param n           the C object, as {@link Ownership#own} hands it to the wrapper
     * @param owner       the lifecycle this one belongs to, or null
     */
    public ResourceLifecycle(String description, Ownership.Pending n, ResourceLifecycle owner, Hooks hooks) {
        if (n.built != null) {
            throw new IllegalStateException("a Native builds one resource");
        }
        n.built = this;
        this.description = description;
        this.arena = n.arena;
        // A guarded handle is unscoped: enter() is what keeps it from use after close.
        this.handle = arena == null ? n.raw.reinterpret(n.size) : n.raw.reinterpret(n.size, arena, null);
        this.address = n.raw.address();
        this.owner = owner;
        this.hooks = hooks;
    }

    void publish() {
        if (owner != null) {
            owner.adopt(this);
        }
        try {
            hooks.opened();
        } catch (RuntimeException | Error e) {
            if (owner != null) {
                owner.disown(this);
            }
            throw e;
        }
    }

    /** The handle, scoped to the arena: passing it to a downcall after close throws. Not for a guarded object. */
    public MemorySegment handle() {
        if (arena == null) {
            throw new IllegalStateException(description + " is guarded: use its handle between enter() and leave()");
        }
        return handle;
    }

    /** The arena that lives exactly as long as this object, for its own native buffers. Not for a guarded object. */
    public Arena arena() {
        if (arena == null) {
            throw new IllegalStateException(description + " is guarded and has no arena");
        }
        return arena;
    }

    public boolean isGuarded() {
        return arena == null;
    }

    /**
     * A guarded object's handle, usable until the matching {@link #leave()},
     * which the caller runs in a {@code finally}; a close waits for it.
     * Throws {@link ClosedResourceException} once the object is closing.
     */
    public MemorySegment enter() {
        // Count first, then look at the state; close() sets the state, then
        // looks at the count. Both are volatile, so one of them sees the other.
        CALLS.getAndAdd(this, 1);
        if (state != OPEN) {
            CALLS.getAndAdd(this, -1);
            throw closedError();
        }
        return handle;
    }

    /** Ends a call begun with {@link #enter()}. */
    public void leave() {
        CALLS.getAndAdd(this, -1);
    }

    /**
     * Runs {@code use} with the handle: a guarded object stays entered until
     * {@code use} returns, so a close waits for it; an arena-owned one is
     * guarded by the downcalls that pass its handle.
     */
    public <R> R withHandle(HandleUse<R> use) throws RdmaException {
        if (arena != null) {
            return use.use(handle);
        }
        MemorySegment h = enter();
        try {
            return use.use(h);
        } finally {
            leave();
        }
    }

    /** {@code call} with the handle as its first argument; a close waits for it. */
    public int status(NativeCall call, String what, Object... rest) throws RdmaException {
        return withHandle(h -> {
            Object[] args = new Object[rest.length + 1];
            args[0] = h;
            System.arraycopy(rest, 0, args, 1, rest.length);
            return call.status(what, args);
        });
    }

    public String description() {
        return description;
    }

    public boolean isClosed() {
        return state == CLOSED;
    }

    /** Throws {@link ClosedResourceException} if this object is closed or closing. */
    public void checkOpen() {
        if (state != OPEN) {
            throw closedError();
        }
    }

    public ClosedResourceException closedError() {
        return new ClosedResourceException(description + (state == CLOSING ? " is closing" : " is closed"));
    }

    /** The JDK's "already closed" from a dead arena as a {@link ClosedResourceException}, for hot paths. */
    public RuntimeException translate(IllegalStateException e) {
        return state != OPEN ? new ClosedResourceException(description + " is closed", e) : e;
    }

    private synchronized void adopt(ResourceLifecycle child) {
        if (state != OPEN) {
            throw closedError();
        }
        children.push(child);
    }

    private synchronized void disown(ResourceLifecycle child) {
        children.remove(child);
    }

    /**
     * Records that {@code user} depends on this object: closing is refused
     * until {@link #removeUser} with the same object, whose {@code toString()}
     * names it in that refusal. Refused once closing began.
     */
    public synchronized void addUser(Object user) {
        if (state != OPEN) {
            throw closedError();
        }
        users.add(user);
    }

    private synchronized boolean inUse() {
        return !users.isEmpty();
    }

    /** Undoes one {@link #addUser} of {@code user} (by identity); does nothing if there is none. */
    public synchronized void removeUser(Object user) {
        for (int i = 0; i < users.size(); i++) {
            if (users.get(i) == user) {
                users.remove(i);
                return;
            }
        }
    }

    /** Closes this object and its children, waiting up to {@code callWait} for calls on other threads. */
    public void close(Duration callWait) throws RdmaException {
        closing.lock();
        try {
            List<ResourceLifecycle> toClose;
            synchronized (this) {
                if (state == CLOSED) {
                    return;
                }
                if (!users.isEmpty()) {
                    throw new ResourceInUseException(description + " is still used by " + users.getFirst()
                            + (users.size() > 1 ? " and " + (users.size() - 1) + " more" : "") + "; close those first");
                }
                state = CLOSING; // from here on, no new child or user can appear
                toClose = new ArrayList<>(children); // newest first
            }
            RdmaException failure;
            boolean closed = false;
            try {
                if (arena == null) {
                    // A guarded owner first waits for its calls: one of them may be making a child
                    // that is registered already but still in opened(), which must finish first.
                    awaitNoCalls(callWait);
                    failure = closeChildren(toClose, callWait);
                } else {
                    failure = closeChildren(toClose, callWait);
                    awaitNoCalls(callWait);
                }
                closed = true;
            } finally {
                synchronized (this) {
                    state = closed ? CLOSED : OPEN;
                }
            }
            try {
                hooks.destroy(MemorySegment.ofAddress(address));
            } catch (RdmaException e) {
                failure = failure == null ? e : failure;
            } finally {
                if (owner != null) {
                    owner.disown(this);
                }
                hooks.released();
            }
            if (failure != null) {
                throw failure;
            }
        } finally {
            closing.unlock();
        }
    }

    private RdmaException closeChildren(List<ResourceLifecycle> toClose, Duration callWait) {
        RdmaException failure = null;
        // Newest first, but a child still used by a sibling's descendant (a CQ
        // used by a QP of a PD) waits for a later pass, after that user closed.
        // Those in use when we look go last from the start, each looked at once (a
        // user may leave meanwhile): a refusal is an exception, and a connection's
        // CQ would take one per close.
        List<ResourceLifecycle> used = new ArrayList<>();
        List<ResourceLifecycle> ordered = new ArrayList<>(toClose.size());
        for (ResourceLifecycle child : toClose) {
            (child.inUse() ? used : ordered).add(child);
        }
        ordered.addAll(used);
        toClose = ordered;
        while (!toClose.isEmpty()) {
            List<ResourceLifecycle> refused = new ArrayList<>();
            ResourceInUseException why = null;
            for (ResourceLifecycle child : toClose) {
                try {
                    child.close(callWait);
                } catch (RdmaException e) {
                    failure = failure == null ? e : failure;
                } catch (ResourceBusyException busy) {
                    throw new ResourceBusyException(description + " not closed: " + busy.getMessage(), busy);
                } catch (ResourceInUseException inUse) {
                    refused.add(child);
                    // The first refusal names the holder: later ones, sorted last as in use,
                    // are often held only by what the first refused child keeps open.
                    why = why == null ? inUse : why;
                }
            }
            if (refused.size() == toClose.size()) {
                throw new ResourceInUseException(description + " not closed: " + why.getMessage()
                        + " (a resource of another owner)", why);
            }
            toClose = refused;
        }
        return failure;
    }

    /**
     * Waits up to {@code callWait} for calls on other threads to end: until the
     * arena closes (its close fails while a call uses the handle), or, guarded,
     * until no call is counted in.
     */
    private void awaitNoCalls(Duration callWait) {
        long deadline = System.nanoTime() + callWait.toNanos();
        for (int attempt = 0; ; attempt++) {
            IllegalStateException busy = null;
            if (arena == null) {
                if ((int) CALLS.getVolatile(this) == 0) {
                    return;
                }
            } else {
                try {
                    arena.close();
                    return;
                } catch (IllegalStateException e) {
                    busy = e;
                }
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new ResourceBusyException(description + " is still in a call on another thread after "
                        + callWait.toMillis() + " ms; not closed", busy);
            }
            // Posts and polls return in microseconds: spin briefly, then back off.
            if (attempt < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(100_000);
            }
        }
    }

    @Override
    public String toString() {
        return description + (isClosed() ? " (closed)" : "");
    }
}

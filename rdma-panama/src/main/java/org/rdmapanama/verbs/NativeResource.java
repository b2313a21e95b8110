package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceBusyException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.NativeCall;
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
 * A native object (context, PD, MR, CQ, QP, ...), owned either by one shared
 * {@link Arena} or, guarded, by a count of the calls in flight (below). An
 * arena-owned object's handle segment is scoped to that arena, so once the
 * arena is closed any call that passes the handle fails with an exception
 * instead of reaching freed memory, and the arena cannot close while a call
 * on another thread is using the handle.
 * <p>
 * <b>Creation.</b> A subclass never publishes itself from its constructor:
 * its factory creates the C object and hands it to {@link #own}, which runs the
 * constructor, then registers the new object with its owner. If the
 * constructor or the registration fails, {@code own} frees the C object; a
 * native object whose Java wrapper failed is never left behind.
 * <p>
 * <b>Closing.</b> Children (a QP of a PD, an MR of a PD, a PD of a context)
 * are closed, newest first, before their owner. {@code close()} is idempotent
 * and thread-safe, and has exactly these outcomes:
 * <ul>
 *   <li>it returns: the resource and all its children are closed;</li>
 *   <li>{@link ResourceInUseException}: another resource depends on this one
 *       (a QP on its CQ, a send request on its address handle); nothing of
 *       this resource was freed, it stays usable;</li>
 *   <li>{@link ResourceBusyException}: a call on another thread kept using it
 *       for longer than the close was willing to wait; it stays usable;</li>
 *   <li>{@link RdmaException}: the C destroy call failed; the Java side is
 *       closed anyway.</li>
 * </ul>
 * While a close is in progress, new children and new dependents are refused.
 * <p>
 * <b>Guarded resources.</b> Closing a shared arena is a handshake with every
 * Java thread, run by the VM thread: some 0.1 ms under emulation, paid per
 * resource. A resource that hands out no memory of its own to Java and is not
 * on the data path (a device context, a PD, a cm_id) can instead be made with
 * {@link #ownGuarded}: it has no arena, and every use of its handle, a call
 * or a read of its struct, runs between {@link #enter()} and {@link #leave()},
 * which count the uses in flight. Its close marks it closing, then waits for
 * that count to reach zero as an arena's close would, with the same outcomes.
 * Children are made with {@link #ownChild}, which keeps the owner entered
 * until the child is registered with it or freed.
 */
public abstract class NativeResource implements AutoCloseable {
    /** How long {@link #close()} waits for calls on other threads (a post, a poll) to return. */
    public static final Duration DEFAULT_CALL_WAIT = Duration.ofSeconds(10);

    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;

    private final String description;
    private final Arena arena;
    private final MemorySegment handle;
    private final long address;
    private final NativeResource owner;
    private final Deque<NativeResource> children = new ArrayDeque<>(); // guarded by this
    private final List<Object> users = new ArrayList<>();              // guarded by this
    private final ReentrantLock closing = new ReentrantLock();        // one close at a time
    private volatile int state = OPEN;
    @SuppressWarnings("unused") // through CALLS
    private volatile int calls;   // guarded resources: calls between enter() and leave()

    private static final VarHandle CALLS;

    // Every object that reaches the bridge (a cm_id, a connection's PD) is a NativeResource,
    // so this class is initialized before the bridge is first used: no lookup by class name.
    static {
        Bridge.register(new QueuePair.BridgeImpl());
    }

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(NativeResource.class, "calls", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A C object on its way into a {@link NativeResource}: the pointer, the
     * size of its struct, and the arena the resource will own (none if guarded).
     */
    protected static final class Native {
        private final MemorySegment raw;
        private final long size;
        private final Arena arena; // null for a guarded resource
        private boolean taken;

        private Native(MemorySegment raw, long size, boolean guarded) {
            this.raw = raw;
            this.size = size;
            this.arena = guarded ? null : Arena.ofShared();
        }

        /** The struct, readable for the constructor (e.g. a QP's number for its description). */
        public MemorySegment struct() {
            return raw.reinterpret(size);
        }
    }

    /** Builds the Java object around {@code n}; called by {@link #own}. */
    @FunctionalInterface
    protected interface Wrapper<T extends NativeResource> {
        T wrap(Native n) throws RdmaException;
    }

    /** Makes a child's C object; {@code owner} is the owner's handle (the {@code ibv_create_*} call). */
    @FunctionalInterface
    protected interface Maker {
        MemorySegment make(MemorySegment owner) throws RdmaException;
    }

    /** Frees a C object (the {@code ibv_destroy_*} call). */
    @FunctionalInterface
    protected interface Freer {
        void free(MemorySegment raw) throws RdmaException;
    }

    /**
     * Takes ownership of the C object {@code raw}: runs {@code wrapper}, whose
     * constructor must pass the {@link Native} it is given to
     * {@link #NativeResource(String, Native, NativeResource)}, then registers
     * the result with its owner and calls {@link #opened()}. If any of that
     * fails, {@code freer} frees {@code raw} and the failure is rethrown.
     */
    protected static <T extends NativeResource> T own(MemorySegment raw, long size, Freer freer, Wrapper<T> wrapper)
            throws RdmaException {
        return own(new Native(raw, size, false), freer, wrapper);
    }

    /**
     * As {@link #own}, for a guarded resource: no arena; its handle is used
     * only between {@link #enter()} and {@link #leave()}.
     */
    protected static <T extends NativeResource> T ownGuarded(MemorySegment raw, long size, Freer freer,
            Wrapper<T> wrapper) throws RdmaException {
        return own(new Native(raw, size, true), freer, wrapper);
    }

    /**
     * Makes a child of this resource with {@code make}, given this resource's
     * handle, and owns it as {@link #own} ({@code guarded}: {@link #ownGuarded})
     * does. A guarded owner stays entered until the child is registered with
     * it or freed, so its close cannot free it in between: the close then
     * either closes the registered child first, or waits while a child that
     * came too late is refused and freed.
     */
    protected final <T extends NativeResource> T ownChild(Maker make, long size, Freer freer, Wrapper<T> wrapper,
            boolean guarded) throws RdmaException {
        return withHandle(h -> own(new Native(make.make(h), size, guarded), freer, wrapper));
    }

    private static <T extends NativeResource> T own(Native n, Freer freer, Wrapper<T> wrapper) throws RdmaException {
        T resource = null;
        try {
            resource = wrapper.wrap(n);
            NativeResource built = resource;
            if (built.arena != n.arena || built.address != n.raw.address()) {
                throw new IllegalStateException("the wrapper did not build its resource from the given Native");
            }
            built.publish();
            return resource;
        } catch (Throwable t) {
            try {
                abandon(n, resource, freer);
            } catch (Throwable alsoFailed) {
                t.addSuppressed(alsoFailed);
            }
            throw t;
        }
    }

    private static void abandon(Native n, NativeResource half, Freer freer) throws RdmaException {
        if (half != null) {
            half.state = CLOSED;
        }
        if (n.arena != null) {
            n.arena.close(); // nobody else has seen the handle, so no call can hold it
        }
        freer.free(n.raw);
    }

    /**
     * @param description what error messages call it, e.g. {@code "QueuePair 17 on rxe0"}
     * @param n           the C object, as {@link #own} hands it to the wrapper
     * @param owner       the resource this one belongs to, or null
     */
    protected NativeResource(String description, Native n, NativeResource owner) {
        if (n.taken) {
            throw new IllegalStateException("a Native builds one resource");
        }
        n.taken = true;
        this.description = description;
        this.arena = n.arena;
        // A guarded handle is unscoped: enter() is what keeps it from use after close.
        this.handle = arena == null ? n.raw.reinterpret(n.size) : n.raw.reinterpret(n.size, arena, null);
        this.address = n.raw.address();
        this.owner = owner;
    }

    private void publish() {
        if (owner != null) {
            owner.adopt(this);
        }
        try {
            opened();
        } catch (RuntimeException | Error e) {
            if (owner != null) {
                owner.disown(this);
            }
            throw e;
        }
    }

    /** Hook after the resource is registered with its owner: the place to let others see it. */
    protected void opened() {
    }

    /** The handle, valid until close; passing it to a downcall after close throws. Not for a guarded resource. */
    protected final MemorySegment handle() {
        if (arena == null) {
            throw new IllegalStateException(description + " is guarded: use its handle between enter() and leave()");
        }
        return handle;
    }

    /** The arena that lives exactly as long as this resource, for its own native buffers. Not for a guarded resource. */
    protected final Arena arena() {
        if (arena == null) {
            throw new IllegalStateException(description + " is guarded and has no arena");
        }
        return arena;
    }

    /**
     * A guarded resource's handle, usable until the matching {@link #leave()},
     * which the caller runs in a {@code finally}; a close waits for it.
     * Throws {@link ClosedResourceException} once the resource is closing.
     */
    protected final MemorySegment enter() {
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
    protected final void leave() {
        CALLS.getAndAdd(this, -1);
    }

    /** What {@link #withHandle} runs. */
    @FunctionalInterface
    protected interface HandleUse<R> {
        R use(MemorySegment handle) throws RdmaException;
    }

    /**
     * Runs {@code use} with this resource's handle: a guarded resource stays
     * entered until {@code use} returns, so a close waits for it; an
     * arena-owned one is guarded by the downcalls that pass its handle.
     */
    protected final <R> R withHandle(HandleUse<R> use) throws RdmaException {
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

    /** {@code call} with this resource's handle as its first argument, returning a status; a close waits for it. */
    protected final int statusWith(NativeCall call, String what, Object... rest) throws RdmaException {
        return withHandle(h -> {
            Object[] args = new Object[rest.length + 1];
            args[0] = h;
            System.arraycopy(rest, 0, args, 1, rest.length);
            return call.status(what, args);
        });
    }

    protected final String description() {
        return description;
    }

    public final boolean isClosed() {
        return state == CLOSED;
    }

    /** Throws {@link ClosedResourceException} if this resource is closed or closing. */
    protected final void checkOpen() {
        if (state != OPEN) {
            throw closedError();
        }
    }

    protected final ClosedResourceException closedError() {
        return new ClosedResourceException(description + (state == CLOSING ? " is closing" : " is closed"));
    }

    /**
     * Turns the JDK's "already closed" {@link IllegalStateException} from a
     * dead arena into a {@link ClosedResourceException}, on hot paths that
     * make no explicit check.
     */
    protected final RuntimeException translate(IllegalStateException e) {
        return state != OPEN ? new ClosedResourceException(description + " is closed", e) : e;
    }

    private synchronized void adopt(NativeResource child) {
        if (state != OPEN) {
            throw closedError();
        }
        children.push(child);
    }

    private synchronized void disown(NativeResource child) {
        children.remove(child);
    }

    /**
     * Records that {@code user} depends on this resource (a QP, or a QP being
     * created, on its CQs; a send request on an address handle): closing is
     * refused until {@link #removeUser} with the same object. {@code user}'s
     * {@code toString()} names it in that refusal. Refused once closing began.
     */
    protected final synchronized void addUser(Object user) {
        if (state != OPEN) {
            throw closedError();
        }
        users.add(user);
    }

    private synchronized boolean inUse() {
        return !users.isEmpty();
    }

    /** Undoes one {@link #addUser} of {@code user} (by identity); does nothing if there is none. */
    protected final synchronized void removeUser(Object user) {
        for (int i = 0; i < users.size(); i++) {
            if (users.get(i) == user) {
                users.remove(i);
                return;
            }
        }
    }

    /** Closes, waiting up to {@link #DEFAULT_CALL_WAIT} for calls on other threads to return. */
    @Override
    public final void close() throws RdmaException {
        close(DEFAULT_CALL_WAIT);
    }

    /**
     * Closes this resource and its children, waiting up to {@code callWait}
     * for calls on other threads that use one of them to return. See the class
     * comment for the outcomes.
     */
    public final void close(Duration callWait) throws RdmaException {
        closing.lock();
        try {
            List<NativeResource> toClose;
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
        } finally {
            closing.unlock();
        }
    }

    private RdmaException closeChildren(List<NativeResource> toClose, Duration callWait) {
        RdmaException failure = null;
        // Newest first, but a child still used by a sibling's descendant (a CQ
        // used by a QP of a PD) waits for a later pass, after that user closed.
        // Those in use when we look go last from the start, each looked at once (a
        // user may leave meanwhile): a refusal is an exception, and a connection's
        // CQ would take one per close.
        List<NativeResource> used = new ArrayList<>();
        List<NativeResource> ordered = new ArrayList<>(toClose.size());
        for (NativeResource child : toClose) {
            (child.inUse() ? used : ordered).add(child);
        }
        ordered.addAll(used);
        toClose = ordered;
        while (!toClose.isEmpty()) {
            List<NativeResource> refused = new ArrayList<>();
            ResourceInUseException why = null;
            for (NativeResource child : toClose) {
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

    /** Frees the C object; {@code raw} is the unscoped pointer (the arena is closed, or no call is in flight). */
    protected abstract void destroy(MemorySegment raw) throws RdmaException;

    /** Hook after destroy, for releasing dependencies (a QP's hold on its CQs). */
    protected void released() {
    }

    @Override
    public String toString() {
        return description + (isClosed() ? " (closed)" : "");
    }
}

package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceBusyException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.NativeCall;
import org.rdmapanama.internal.Ownership;
import org.rdmapanama.internal.ResourceLifecycle;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * A native object (context, PD, MR, CQ, QP, ...), owned either by one shared
 * {@link Arena} or, guarded, by a count of the calls in flight. An arena-owned
 * object's handle segment is scoped to that arena, so once the arena is closed
 * any call that passes the handle fails with an exception instead of reaching
 * freed memory, and the arena cannot close while a call on another thread is
 * using the handle. If making its Java object fails, the C object is freed:
 * none is left behind.
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
 * Once closed, any use throws {@link ClosedResourceException}.
 */
public abstract class NativeResource implements AutoCloseable {
    /** How long {@link #close()} waits for calls on other threads (a post, a poll) to return. */
    public static final Duration DEFAULT_CALL_WAIT = Duration.ofSeconds(10);

    // The cm layer reaches the bridge only through a cm_id, whose class reads DEFAULT_CALL_WAIT and so
    // initializes this class first: the bridge is registered without naming a class.
    static {
        Bridge.register(new QueuePairBridge());
    }

    private final ResourceLifecycle life;
    private final MemorySegment handle; // null when guarded; the lifecycle's, kept here for the data path

    /** A C object on its way into a resource, as {@link #own} hands it to a constructor. */
    static final class Native {
        final Ownership.Pending pending;

        private Native(Ownership.Pending pending) {
            this.pending = pending;
        }

        /** The struct, readable for the constructor (e.g. a QP's number for its description). */
        MemorySegment struct() {
            return pending.struct();
        }
    }

    /** Builds the Java object around {@code n}; called by {@link #own}. */
    @FunctionalInterface
    interface Wrapper<T extends NativeResource> {
        T wrap(Native n) throws RdmaException;
    }

    /** Frees a C object (the {@code ibv_destroy_*} call). */
    @FunctionalInterface
    interface Freer extends Ownership.Freer {
    }

    /** Makes a child's C object; {@code owner} is the owner's handle (the {@code ibv_create_*} call). */
    @FunctionalInterface
    interface Maker extends Ownership.Maker {
    }

    /** What {@link #withHandle} runs. */
    @FunctionalInterface
    interface HandleUse<R> {
        R use(MemorySegment handle) throws RdmaException;
    }

    /**
     * Takes ownership of the C object {@code raw}: runs {@code wrapper}, whose
     * constructor passes the {@link Native} it is given to this class's, then
     * registers the result with its owner and calls {@link #opened()}. If any
     * of that fails, {@code freer} frees {@code raw} and the failure is rethrown.
     */
    static <T extends NativeResource> T own(MemorySegment raw, long size, Freer freer, Wrapper<T> wrapper)
            throws RdmaException {
        return Ownership.own(raw, size, false, freer, p -> wrapper.wrap(new Native(p)));
    }

    /** As {@link #own}, for a guarded resource: no arena; its handle is used only between enter() and leave(). */
    static <T extends NativeResource> T ownGuarded(MemorySegment raw, long size, Freer freer,
            Wrapper<T> wrapper) throws RdmaException {
        return Ownership.own(raw, size, true, freer, p -> wrapper.wrap(new Native(p)));
    }

    /**
     * Makes a child of this resource with {@code make}, given this resource's
     * handle, and owns it as {@link #own} ({@code guarded}: {@link #ownGuarded})
     * does; a guarded owner cannot close in between.
     */
    final <T extends NativeResource> T ownChild(Maker make, long size, Freer freer,
            Wrapper<T> wrapper, boolean guarded) throws RdmaException {
        return Ownership.ownChild(life, make, size, guarded, freer, p -> wrapper.wrap(new Native(p)));
    }

    /**
     * @param description what error messages call it, e.g. {@code "QueuePair 17 on rxe0"}
     * @param n           the C object, as {@link #own} hands it to the wrapper
     * @param owner       the resource this one belongs to, or null
     */
    NativeResource(String description, Native n, NativeResource owner) {
        this.life = new ResourceLifecycle(description, n.pending, owner == null ? null : owner.life,
                new ResourceLifecycle.Hooks() {
                    @Override
                    public void destroy(MemorySegment raw) throws RdmaException {
                        NativeResource.this.destroy(raw);
                    }

                    @Override
                    public void released() {
                        NativeResource.this.released();
                    }

                    @Override
                    public void opened() {
                        NativeResource.this.opened();
                    }
                });
        this.handle = life.isGuarded() ? null : life.handle();
    }

    /** Hook after the resource is registered with its owner: the place to let others see it. */
    void opened() {
    }

    /** The handle, valid until close; passing it to a downcall after close throws. Not for a guarded resource. */
    final MemorySegment handle() {
        return handle != null ? handle : life.handle(); // the latter throws, saying why
    }

    /** The arena that lives exactly as long as this resource, for its own native buffers. Not for a guarded resource. */
    final Arena arena() {
        return life.arena();
    }

    /** A guarded resource's handle until the matching {@link #leave()}, run in a {@code finally}; a close waits. */
    final MemorySegment enter() {
        return life.enter();
    }

    /** Ends a call begun with {@link #enter()}. */
    final void leave() {
        life.leave();
    }

    /** Runs {@code use} with the handle; a guarded resource stays entered until it returns. */
    final <R> R withHandle(HandleUse<R> use) throws RdmaException {
        return life.withHandle(use::use);
    }

    /** {@code call} with this resource's handle as its first argument, returning a status; a close waits for it. */
    final int statusWith(NativeCall call, String what, Object... rest) throws RdmaException {
        return life.status(call, what, rest);
    }

    final String description() {
        return life.description();
    }

    public final boolean isClosed() {
        return life.isClosed();
    }

    /** Throws {@link ClosedResourceException} if this resource is closed or closing. */
    final void checkOpen() {
        life.checkOpen();
    }

    final ClosedResourceException closedError() {
        return life.closedError();
    }

    /** A dead arena's "already closed" as a {@link ClosedResourceException}, on hot paths with no explicit check. */
    final RuntimeException translate(IllegalStateException e) {
        return life.translate(e);
    }

    /** Records that {@code user} depends on this resource: closing is refused until {@link #removeUser}. */
    final void addUser(Object user) {
        life.addUser(user);
    }

    /** Undoes one {@link #addUser} of {@code user} (by identity). */
    final void removeUser(Object user) {
        life.removeUser(user);
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
        life.close(callWait);
    }

    /** Frees the C object; {@code raw} is the unscoped pointer (the arena is closed, or no call is in flight). */
    abstract void destroy(MemorySegment raw) throws RdmaException;

    /** Hook after destroy, for releasing dependencies (a QP's hold on its CQs). */
    void released() {
    }

    @Override
    public String toString() {
        return life.toString();
    }
}

package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;

/**
 * The thread a {@link ConfinedPoller} or {@link ConfinedPoster} belongs to.
 * Its state is plain fields: only that thread reads them on the data path,
 * and only that thread closes, so a call and the close never overlap. Once
 * the thread has ended no call can be running, and any thread may close.
 */
final class ThreadConfinement {
    private final Thread owner;
    private final String what;
    private boolean closed; // written under this object's lock, read by the owner without it

    ThreadConfinement(String what) {
        this.owner = Thread.currentThread();
        this.what = what;
    }

    Thread owner() {
        return owner;
    }

    /** Throws unless the caller is the owner and this is not closed. */
    void check() {
        if (Thread.currentThread() != owner) {
            throw new WrongThreadException(what + " belongs to thread \"" + owner.getName()
                    + "\"; make one per thread, or use the shared path on the resource itself");
        }
        if (closed) {
            throw new ClosedResourceException(what + " is closed");
        }
    }

    /**
     * Marks it closed; true the first time. Refused on another thread while
     * the owner lives: the owner may be inside a call this close would outlive.
     */
    synchronized boolean close() {
        if (Thread.currentThread() != owner && owner.isAlive()) {
            throw new WrongThreadException(what + " can be closed only by its thread \"" + owner.getName()
                    + "\" (or by any thread once that one has ended)");
        }
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    @Override
    public String toString() {
        return what + " (thread \"" + owner.getName() + "\")";
    }
}

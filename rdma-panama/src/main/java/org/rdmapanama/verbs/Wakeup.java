package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Posix;

import java.lang.foreign.Arena;

/**
 * An eventfd(2) that wakes a thread asleep in poll(2): the one wake-up
 * primitive of the runtime (a {@link CompletionWaiter}'s, the rdma_cm event
 * loop's). {@link #signal} is for any thread; {@link #drain} is for the
 * thread that waits on {@link #fd}.
 * <p>
 * Every use of the fd runs under this object's lock, and {@link #close}
 * closes it under that lock: a signal racing with the close never writes to
 * the fd number after it was closed, when the kernel may already have given
 * that number to another file. Close it after the threads that wait on it
 * stopped waiting (close their {@link CompletionWaiter} first).
 */
public final class Wakeup implements AutoCloseable {
    private final String what;
    private final int fd;
    private final Arena arena = Arena.ofShared(); // any thread signals, and may close
    private final Posix.Scratch scratch;          // used under the lock
    private volatile boolean closed;               // written under the lock

    private Wakeup(String what, int fd) {
        this.what = what;
        this.fd = fd;
        this.scratch = new Posix.Scratch(arena);
    }

    /** A new eventfd, non-blocking and close-on-exec; {@code what} names it in messages. */
    public static Wakeup create(String what) throws RdmaException {
        int fd = Posix.eventFd(what);
        try {
            return new Wakeup(what, fd);
        } catch (RuntimeException | Error e) {
            Posix.closeFd(fd);
            throw e;
        }
    }

    /**
     * Makes the fd readable, waking a thread that polls it (now, or at its next
     * poll). Thread-safe and allocation-free; signals before the next drain
     * coalesce. Does nothing once closed: nobody waits on it any more.
     */
    public void signal() {
        synchronized (this) {
            if (!closed) {
                Posix.signal(scratch, fd);
            }
        }
    }

    /**
     * Makes it unreadable again, so that the next poll sleeps; called by the
     * waiting thread after its poll saw it readable. Allocation-free.
     *
     * @throws ClosedResourceException if it is closed
     */
    public void drain() {
        synchronized (this) {
            if (closed) {
                throw closedError();
            }
            Posix.drain(scratch, fd);
        }
    }

    /** The eventfd, for a poll(2) on it: valid until {@link #close}, never to be read, written or closed directly. */
    public int fd() {
        return fd;
    }

    public boolean isClosed() {
        return closed;
    }

    ClosedResourceException closedError() {
        return new ClosedResourceException(this + " is closed");
    }

    /** Closes the eventfd; idempotent, any thread. Later signals do nothing. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            Posix.closeFd(fd);
        }
        arena.close(); // no use of the scratch can follow: each runs under the lock, after a check
    }

    @Override
    public String toString() {
        return "Wakeup (eventfd " + fd + ") of " + what;
    }
}

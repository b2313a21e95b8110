package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Libc;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Sleeps in one poll(2) on a {@link CompletionChannel} and a {@link Wakeup}:
 * an event loop's wait, after it has busy-polled its CQ for a while and armed
 * it ({@link CompletionQueue#requestNotification}). The pollfds and the
 * out-pointers of {@code ibv_get_cq_event} are allocated once, here, so
 * {@link #await} allocates nothing.
 * <p>
 * Made by {@link CompletionChannel#newWaiter} and confined to the thread that
 * made it: another thread gets a {@link WrongThreadException}. While it is
 * open its channel refuses to close ({@link ResourceInUseException} naming
 * it), so the channel's fd cannot be closed under a poll. Close it on its
 * thread, or on any thread once that one has ended, before the channel and
 * before the wakeup.
 */
public final class CompletionWaiter implements AutoCloseable {
    private final CompletionChannel channel;
    private final Wakeup wakeup;
    private final ThreadConfinement thread;
    private final Arena arena; // shared: another thread closes it once the owner has ended
    private final Posix.Scratch scratch;
    private final MemorySegment channelAtAddress; // no scope to acquire: the hold keeps the channel alive
    private final MemorySegment cqOut;
    private final MemorySegment ctxOut;
    private final MemorySegment callState;
    private final int channelFd;

    CompletionWaiter(CompletionChannel channel, Wakeup wakeup) {
        Verbs.CqEvents.link();
        this.channel = channel;
        this.wakeup = wakeup;
        this.thread = new ThreadConfinement("CompletionWaiter of " + channel.description());
        this.channelFd = channel.fd();
        channel.addUser(thread); // refused if the channel is closing; from here on it cannot close
        boolean ok = false;
        Arena a = Arena.ofShared();
        try {
            this.arena = a;
            this.scratch = new Posix.Scratch(a);
            this.cqOut = a.allocate(ADDRESS);
            this.ctxOut = a.allocate(ADDRESS);
            this.callState = Libc.allocateCallState(a);
            this.channelAtAddress = MemorySegment.ofAddress(channel.channel().address());
            ok = true;
        } finally {
            if (!ok) {
                a.close();
                channel.removeUser(thread);
            }
        }
    }

    /**
     * Waits until the channel reports an armed CQ's completion, the wakeup is
     * signalled, or {@code timeoutNanos} passes (negative: no limit; 0: a
     * look without sleeping). On an event it gets and acknowledges it (as
     * {@link CompletionChannel#await} does) and returns the CQ, which must be
     * re-armed before it signals again. Returns null on a wakeup (drained
     * here), on timeout, and, rarely, early on a signal (EINTR): callers loop.
     * A wakeup that comes with an event is drained too: look at what wakers
     * queued after every return.
     *
     * @throws ClosedResourceException         if this waiter or the wakeup is closed
     * @throws CompletionQueueOverrunException if one of the channel's CQs overran (it would never signal again)
     * @throws RdmaException                    if poll(2) or {@code ibv_get_cq_event} fails
     */
    public CompletionQueue await(long timeoutNanos) throws RdmaException {
        thread.check();
        if (wakeup.isClosed()) {
            throw wakeup.closedError();
        }
        channel.checkUsable();
        // Round up: waking before the deadline would only make the caller wait again.
        int timeout = timeoutNanos < 0 ? -1 : (int) Math.min(Integer.MAX_VALUE,
                timeoutNanos / 1_000_000 + (timeoutNanos % 1_000_000 != 0 ? 1 : 0));
        int ready = Posix.pollBoth(scratch, channelFd, wakeup.fd(), timeout);
        if (ready < 0) {
            throw Errno.failure("poll", thread.toString(), ready);
        }
        if ((ready & Posix.SECOND_FAILED) != 0) {
            if (wakeup.isClosed()) {
                throw wakeup.closedError();
            }
            throw Errno.failure("poll", wakeup.toString(), -Errno.EIO);
        }
        if ((ready & Posix.SECOND_READABLE) != 0) {
            wakeup.drain();
        }
        if ((ready & Posix.FIRST_FAILED) != 0) {
            throw Errno.failure("poll", channel.description(), -Errno.EIO);
        }
        return (ready & Posix.FIRST_READABLE) != 0 ? takeEvent() : null;
    }

    private CompletionQueue takeEvent() throws RdmaException {
        int rc = Verbs.CqEvents.get(callState, channelAtAddress, cqOut, ctxOut);
        if (rc == -Errno.EAGAIN) {
            return null; // another reader of the channel took it
        }
        if (rc < 0) {
            throw Errno.failure("ibv_get_cq_event", channel.description(), rc);
        }
        long cqAddress = cqOut.get(JAVA_LONG, 0); // as a long: a segment would be an object per event
        CompletionQueue cq = channel.queueAt(cqAddress); // before the ack: until then the CQ cannot be destroyed
        // Acknowledge at once: ibv_destroy_cq waits for every event to be acked.
        Verbs.CqEvents.ack(cqAddress, 1);
        return cq;
    }

    public CompletionChannel channel() {
        return channel;
    }

    public Wakeup wakeup() {
        return wakeup;
    }

    /** Releases the channel. On the owning thread, or on any once it has ended; idempotent. */
    @Override
    public void close() {
        if (thread.close()) {
            channel.removeUser(thread);
            arena.close();
        }
    }

    @Override
    public String toString() {
        return thread.toString();
    }
}

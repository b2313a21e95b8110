package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.ResourceInUseException;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.Errno;

import java.lang.foreign.MemorySegment;

/**
 * Polls one {@link CompletionQueue} from one thread, the one that created it,
 * without the shared arena's atomic acquire and release that
 * {@link CompletionQueue#poll} pays on every call.
 * <p>
 * The CQ and the batch are passed to the provider by address. What keeps them
 * allocated is not an arena but ownership: while this poller is open its CQ
 * refuses to close ({@link ResourceInUseException} naming the poller), a
 * batch must be one of the CQ's own ({@link CompletionQueue#newBatch}), whose
 * memory lives as long as the CQ, and only the owning thread may poll or
 * close, so a close can never run under a poll. If the thread ends without
 * closing it, any thread may close it.
 * <p>
 * Not for sharing: another thread gets a {@link WrongThreadException}. Close
 * it on its thread before closing the CQ (or the context or connection that
 * owns the CQ).
 */
public final class ConfinedPoller implements CompletionSource, AutoCloseable {
    private final CompletionQueue cq;
    private final ThreadConfinement thread;
    private final MemorySegment pollFn;
    private final long cqAddress;
    private final boolean bound; // pollFn is the provider DataPath's constant call site is bound to

    ConfinedPoller(CompletionQueue cq, MemorySegment pollFn) {
        this.cq = cq;
        this.thread = new ThreadConfinement("ConfinedPoller of " + cq.description());
        this.pollFn = pollFn;
        cq.addUser(thread); // refused if the CQ is closing; from here on it cannot close
        this.cqAddress = cq.cq().address();
        this.bound = DataPath.bindPollCq(pollFn);
    }

    /** {@link CompletionQueue#poll}: up to {@code batch.capacity()} completions into {@code batch}. */
    @Override
    public int poll(CompletionBatch batch) throws RdmaException {
        thread.check();
        if (!batch.belongsTo(cq)) {
            throw new IllegalArgumentException("a ConfinedPoller polls only into batches of its own CQ ("
                    + "CompletionQueue.newBatch): their memory lives as long as the CQ");
        }
        if (cq.hasOverrun()) {
            batch.filled(0);
            throw cq.overrunError();
        }
        int n = bound ? DataPath.pollCqBound(cqAddress, batch.capacity(), batch.address())
                : DataPath.pollCqAt(pollFn, cqAddress, batch.capacity(), batch.address());
        if (n < 0) {
            batch.filled(0);
            throw Errno.failure("ibv_poll_cq", cq.description(), n);
        }
        batch.filled(n);
        return n;
    }

    /** Whether it calls poll_cq through DataPath's constant call site (its provider was the first bound). */
    boolean boundToConstantSite() {
        return bound;
    }

    public CompletionQueue completionQueue() {
        return cq;
    }

    /** Releases the CQ. On the owning thread, or on any once it has ended; idempotent. */
    @Override
    public void close() {
        if (thread.close()) {
            cq.removeUser(thread);
        }
    }

    @Override
    public String toString() {
        return thread.toString();
    }
}

package org.rdmapanama.verbs;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.CompletionQueueOverrunException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * {@code struct ibv_comp_channel}: the file descriptor that signals "a CQ
 * armed with {@link CompletionQueue#requestNotification} has a completion".
 * <p>
 * {@link #await} never blocks in native code for long: it polls the
 * non-blocking fd in slices of at most 100 ms, so a virtual thread is pinned
 * to its carrier for no longer than that, and close or interrupt is noticed.
 */
public final class CompletionChannel extends NativeResource {
    private final DeviceContext context;
    private final int fd;
    /**
     * The attached CQs, copied on change: a waiter looks one up by address on
     * every event, and a scan of a few entries allocates nothing (a map keyed
     * by a boxed address would). Channels serve a few CQs each.
     */
    private volatile CompletionQueue[] queues = new CompletionQueue[0];

    CompletionChannel(DeviceContext context, Native channel) throws RdmaException {
        super("CompletionChannel on " + context.device().name(), channel, context);
        this.context = context;
        this.fd = VerbsObjects.compChannelFd(handle());
        Posix.setNonBlocking(fd, description());
    }

    synchronized void attach(CompletionQueue cq) {
        CompletionQueue[] q = Arrays.copyOf(queues, queues.length + 1);
        q[q.length - 1] = cq;
        queues = q;
    }

    synchronized void detach(CompletionQueue cq) {
        queues = Arrays.stream(queues).filter(c -> c != cq).toArray(CompletionQueue[]::new);
    }

    /** The attached CQ at {@code address}, or null (it closed meanwhile). */
    CompletionQueue queueAt(long address) {
        for (CompletionQueue cq : queues) {
            if (cq.address() == address) {
                return cq;
            }
        }
        return null;
    }

    int fd() {
        return fd;
    }

    /**
     * A waiter for this thread alone that sleeps in poll(2) on this channel and
     * on {@code wakeup} at once, allocating nothing per wait: what an event
     * loop that also runs tasks needs. While it is open this channel refuses to
     * close; close it on this thread first. See {@link CompletionWaiter}.
     */
    public CompletionWaiter newWaiter(Wakeup wakeup) {
        checkOpen();
        if (wakeup.isClosed()) {
            throw wakeup.closedError();
        }
        return new CompletionWaiter(this, wakeup);
    }

    MemorySegment channel() {
        return handle();
    }

    /**
     * Waits for the next completion event, acknowledges it, and returns the CQ
     * it is for; the CQ must be re-armed with {@link CompletionQueue#requestNotification}
     * before it signals again. Returns null when {@code timeout} passes first.
     *
     * @throws InterruptedException       if the thread is interrupted while waiting
     * @throws ClosedResourceException    if the channel is closed while waiting
     * @throws CompletionQueueOverrunException if one of its CQs overran (it would never signal again)
     */
    public CompletionQueue await(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment cqOut = call.allocate(ADDRESS);
            MemorySegment ctxOut = call.allocate(ADDRESS);
            while (Posix.awaitReadable(fd, deadline, description(), this::checkUsable)) {
                int rc;
                try {
                    rc = Verbs.Calls.GET_CQ_EVENT.call(handle(), cqOut, ctxOut);
                } catch (IllegalStateException e) {
                    throw translate(e);
                }
                if (rc == -Errno.EAGAIN) {
                    continue; // another thread took the event
                }
                if (rc < 0) {
                    throw Errno.failure("ibv_get_cq_event", description(), rc);
                }
                long cqAddress = cqOut.get(ADDRESS, 0).address();
                CompletionQueue cq = queueAt(cqAddress);
                // Acknowledge at once: ibv_destroy_cq waits for every event to be acked.
                Verbs.ackCqEvents(MemorySegment.ofAddress(cqAddress), 1);
                if (cq != null) {
                    return cq;
                }
            }
            return null;
        }
    }

    /** Open, and none of its CQs overran: an overrun CQ sends no more events, so say so now. */
    void checkUsable() throws RdmaException {
        checkOpen();
        for (CompletionQueue cq : queues) {
            if (cq.hasOverrun()) {
                throw cq.overrunError();
            }
        }
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DESTROY_COMP_CHANNEL.status(context.device().name(), raw);
    }
}

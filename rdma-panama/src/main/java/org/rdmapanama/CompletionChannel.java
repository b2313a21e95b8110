package org.rdmapanama;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.ibv_comp_channel;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
    private static final long SLICE_MILLIS = 100;

    private final DeviceContext context;
    private final int fd;
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();

    CompletionChannel(DeviceContext context, MemorySegment channel) throws RdmaException {
        super("CompletionChannel on " + context.device().name(), channel, ibv_comp_channel.sizeof(), context);
        this.context = context;
        this.fd = ibv_comp_channel.fd(handle());
        int rc = Posix.setNonBlocking(fd);
        if (rc < 0) {
            throw new RdmaException("fcntl", -rc, "fcntl(O_NONBLOCK) on the completion channel failed: "
                    + Errno.describe(-rc));
        }
    }

    void attach(CompletionQueue cq) {
        queues.put(cq.address(), cq);
    }

    void detach(CompletionQueue cq) {
        queues.remove(cq.address());
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
            while (true) {
                checkOpen();
                for (CompletionQueue cq : queues.values()) { // an overrun CQ sends no more events: say so now
                    if (cq.hasOverrun()) {
                        throw cq.overrunError();
                    }
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting on " + description());
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                int ready = Posix.pollIn(fd, (int) Math.min(SLICE_MILLIS, Math.max(1, left / 1_000_000)));
                if (ready < 0) {
                    checkOpen(); // closed while waiting: its fd went with it, and that is what poll saw
                    throw new RdmaException("poll", -ready, "poll on " + description() + " failed: "
                            + Errno.describe(-ready));
                }
                if (ready == 0) {
                    continue;
                }
                int rc;
                try {
                    rc = Verbs.Calls.GET_CQ_EVENT.statusOrErrno(handle(), cqOut, ctxOut);
                } catch (IllegalStateException e) {
                    throw translate(e);
                }
                if (rc == -11) {
                    continue; // EAGAIN: another thread took the event
                }
                if (rc < 0) {
                    throw new RdmaException("ibv_get_cq_event", -rc, "ibv_get_cq_event on " + description()
                            + " failed: " + Errno.describe(-rc));
                }
                long cqAddress = cqOut.get(ADDRESS, 0).address();
                CompletionQueue cq = queues.get(cqAddress);
                // Acknowledge at once: ibv_destroy_cq waits for every event to be acked.
                Verbs.ackCqEvents(MemorySegment.ofAddress(cqAddress), 1);
                if (cq != null) {
                    return cq;
                }
            }
        }
    }

    @Override
    protected void destroy(MemorySegment raw) throws RdmaException {
        Verbs.Calls.DESTROY_COMP_CHANNEL.status(context.device().name(), raw);
    }
}

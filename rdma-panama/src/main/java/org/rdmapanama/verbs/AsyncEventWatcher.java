package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.internal.Verbs;
import org.rdmapanama.internal.VerbsObjects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads one native context's asynchronous events ({@code ibv_get_async_event})
 * on a daemon thread, and acknowledges each at once. Someone must: libibverbs'
 * {@code ibv_destroy_cq} and {@code ibv_destroy_qp} wait until every event
 * reported on the object has been acknowledged, so an unread event would hang
 * a close. A CQ overrun ({@code IBV_EVENT_CQ_ERR}: the provider dropped
 * completions) marks the {@link CompletionQueue}, whose next poll throws;
 * a QP's fatal error ({@link AsyncEventType#isQpFatal}) completes that
 * {@link QueuePair#fatalEvent}, and {@code DEVICE_FATAL} those of every QP of
 * the context, after the event was acknowledged and outside the watcher's
 * lock, so that a stage may close the QP; the other events are logged.
 * <p>
 * One watcher per {@code ibv_context}, shared by every {@link DeviceContext}
 * wrapping it. librdmacm hands each connection the same context and keeps it
 * open for the life of the process, so the watcher of such a borrowed context
 * is pinned: it outlives its users rather than start a thread per connection.
 * A watcher stops for good when the device goes away (a fatal event, or an fd
 * that reports an error) and leaves the registry, so the next context gets a
 * fresh one.
 */
final class AsyncEventWatcher {
    private static final class Log { // lazily: see org.rdmapanama.internal.Cleanup
        static final Logger LOG = LoggerFactory.getLogger(AsyncEventWatcher.class);
    }
    private static final Map<Long, AsyncEventWatcher> BY_CONTEXT = new HashMap<>(); // guarded by the class

    private final MemorySegment context;
    private final long address;
    private final String device;
    private final int fd;
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();
    private final Map<Long, QueuePair> queuePairs = new ConcurrentHashMap<>();
    private record Fatal(QueuePair qp, AsyncEventType type) {}
    private final List<Fatal> fatals = new ArrayList<>(); // the watcher's thread only
    private int users; // guarded by the class
    private boolean pinned; // guarded by the class
    private boolean stopped; // guarded by this: set before the context may be closed
    /** Signalled on stop, so the thread can wait on the async fd with no timeout; closed by the thread. */
    private final Wakeup wakeup;
    private volatile long portEvents; // written by the watcher's thread only

    private AsyncEventWatcher(MemorySegment context, String device) throws RdmaException {
        this.context = context;
        this.address = context.address();
        this.device = device;
        this.fd = VerbsObjects.asyncFd(context);
        // Events are read while holding the monitor that close() takes: a blocking read would hang a close.
        Posix.setNonBlocking(fd, "the async event fd of " + device);
        // An idle watcher sleeps until an event or its stop: no periodic wake-up takes the vCPU of a
        // busy-polling data path (a JVM shares one vCPU in the lab).
        this.wakeup = Wakeup.create("the async event watcher of " + device);
    }

    /**
     * The watcher for {@code context} (an {@code ibv_context*}), started on first use.
     *
     * @param pinned the context is librdmacm's: keep watching after the last user leaves
     */
    static AsyncEventWatcher acquire(MemorySegment context, String device, boolean pinned) throws RdmaException {
        synchronized (AsyncEventWatcher.class) {
            AsyncEventWatcher w = BY_CONTEXT.get(context.address());
            if (w == null) {
                w = new AsyncEventWatcher(context.reinterpret(VerbsObjects.CONTEXT_SIZE), device);
                try {
                    Thread.ofPlatform().daemon().name("rdma-async-events-" + device).start(w::run);
                } catch (RuntimeException | Error e) {
                    w.wakeup.close(); // its thread would have closed it
                    throw e;
                }
                BY_CONTEXT.put(w.address, w); // only once its thread runs
            }
            w.pinned |= pinned;
            w.users++;
            return w;
        }
    }

    /** Drops one user; the last one of an owned context stops the thread, which never touches it again. */
    void release() {
        synchronized (AsyncEventWatcher.class) {
            if (--users > 0 || pinned) {
                return;
            }
            retire();
            synchronized (this) { // waits for an event being handled right now
                stopped = true;
            }
            wakeup.signal();
        }
    }

    /** Leaves the registry; a new context at the same address gets a new watcher. */
    private void retire() {
        synchronized (AsyncEventWatcher.class) {
            BY_CONTEXT.remove(address, this);
        }
    }

    /** The watcher now registered for the context at {@code address}, or null. */
    static AsyncEventWatcher current(long address) {
        synchronized (AsyncEventWatcher.class) {
            return BY_CONTEXT.get(address);
        }
    }

    /**
     * How many port or device events (GID or LID change, port up or down,
     * fatal) this watcher has read: a description of the device taken when it
     * read N still holds while it reads N.
     */
    long portEvents() {
        return portEvents;
    }

    void watch(CompletionQueue cq) {
        queues.put(cq.address(), cq);
    }

    void unwatch(CompletionQueue cq) {
        queues.remove(cq.address(), cq);
    }

    /** From the QP's creation until just before its destroy: the address is its own only until then. */
    void watch(QueuePair qp) {
        queuePairs.put(qp.qp().address(), qp);
    }

    void unwatch(QueuePair qp) {
        queuePairs.remove(qp.qp().address(), qp);
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = VerbsObjects.allocateAsyncEvent(arena);
            Posix.Scratch scratch = new Posix.Scratch(arena);
            for (;;) {
                // The stop signal stays readable once written: a poll that starts after the stop returns at
                // once, so the check after it is the only one needed.
                int ready = Posix.pollBoth(scratch, fd, wakeup.fd(), -1);
                if (isStopped()) {
                    return; // woken to stop, or the context closed under the poll: expected, not a failure
                }
                if (ready < 0 || (ready & Posix.FIRST_FAILED) != 0) {
                    Log.LOG.warn("{}; no longer watching", Errno.message("poll", "the async event fd of " + device,
                            ready < 0 ? -ready : Errno.EIO));
                    return;
                }
                boolean more = (ready & Posix.FIRST_READABLE) == 0 || drain(event);
                completeFatals();
                if (!more) {
                    return;
                }
            }
        } catch (RuntimeException | Error e) {
            Log.LOG.error("{}: the async event watcher failed; events are no longer read", device, e);
        } finally {
            retire();
            wakeup.close();
        }
    }

    private synchronized boolean isStopped() {
        return stopped;
    }

    /** Reads and acknowledges every pending event; false when the watcher must stop. */
    private synchronized boolean drain(MemorySegment event) {
        // The fd may have been closed and its number reused since poll returned: check first.
        while (!stopped) {
            int rc = Verbs.Calls.GET_ASYNC_EVENT.call(context, event);
            if (rc == -Errno.EAGAIN) {
                return true;
            }
            if (rc < 0) {
                Log.LOG.warn("{}; no longer watching", Errno.message("ibv_get_async_event", device, -rc));
                return false;
            }
            AsyncEventType type = AsyncEventType.UNKNOWN;
            try {
                type = AsyncEventType.of(VerbsObjects.asyncEventType(event));
                handle(type, event);
            } catch (RuntimeException e) { // one bad event must not end the watching
                Log.LOG.error("{}: could not handle async event {}", device, type, e);
            } finally {
                Verbs.ackAsyncEvent(event);
            }
            if (type == AsyncEventType.DEVICE_FATAL) {
                return false; // nothing more comes; the owners close what they hold
            }
        }
        return false;
    }

    private void handle(AsyncEventType type, MemorySegment event) {
        switch (type.element()) {
            case CQ -> {
                CompletionQueue cq = queues.get(VerbsObjects.asyncEventCq(event));
                boolean first = cq == null || !cq.hasOverrun(); // one event per dropped completion: log the first
                if (cq != null) {
                    cq.overran();
                }
                if (first) {
                    Log.LOG.error("{}: {} on {}: completions were dropped", device, type, cq != null ? cq : "an unknown CQ");
                }
            }
            case QP -> {
                int qpn = VerbsObjects.asyncEventQpNumber(event);
                logEvent(type, "QP " + qpn);
                for (QueuePair qp : fatalTargets(type, VerbsObjects.asyncEventQp(event))) {
                    fatals.add(new Fatal(qp, type));
                }
            }
            case PORT -> {
                portEvents++;
                logEvent(type, "port " + VerbsObjects.asyncEventPort(event));
            }
            default -> {
                if (type == AsyncEventType.DEVICE_FATAL || type == AsyncEventType.UNKNOWN) { // unknown: assume the worst
                    portEvents++;
                }
                for (QueuePair qp : fatalTargets(type, 0)) {
                    fatals.add(new Fatal(qp, type));
                }
                logEvent(type, "the device");
            }
        }
    }

    /** The QPs whose {@link QueuePair#fatalEvent} an event of {@code type} on the QP at {@code qpAddress} completes. */
    List<QueuePair> fatalTargets(AsyncEventType type, long qpAddress) {
        if (type == AsyncEventType.DEVICE_FATAL) {
            return List.copyOf(queuePairs.values());
        }
        QueuePair qp = type.isQpFatal() ? queuePairs.get(qpAddress) : null;
        return qp == null ? List.of() : List.of(qp);
    }

    /**
     * Completes the QPs' fatal-event futures: on this thread, which runs their
     * stages, but after the acks and outside the lock, since a stage that
     * closes its QP makes ibv_destroy_qp wait for the ack of that very event.
     */
    private void completeFatals() {
        for (Fatal f : fatals) {
            f.qp().fatal(f.type()); // a stage's exception stays in its own future
        }
        fatals.clear();
    }

    private void logEvent(AsyncEventType type, String what) {
        if (type.isError()) {
            Log.LOG.warn("{}: {} on {}", device, type, what);
        } else {
            Log.LOG.debug("{}: {} on {}", device, type, what);
        }
    }
}

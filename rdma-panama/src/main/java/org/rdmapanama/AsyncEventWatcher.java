package org.rdmapanama;

import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_async_event;
import org.rdmapanama.ffi.ibv_context;
import org.rdmapanama.ffi.ibv_qp;
import org.rdmapanama.internal.Posix;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads one native context's asynchronous events ({@code ibv_get_async_event})
 * on a daemon thread, and acknowledges each at once. Someone must: libibverbs'
 * {@code ibv_destroy_cq} and {@code ibv_destroy_qp} wait until every event
 * reported on the object has been acknowledged, so an unread event would hang
 * a close. A CQ overrun ({@code IBV_EVENT_CQ_ERR}: the provider dropped
 * completions) marks the {@link CompletionQueue}, whose next poll throws;
 * the other events are logged.
 * <p>
 * One watcher per {@code ibv_context}, shared by every {@link DeviceContext}
 * wrapping it (librdmacm hands each connection the same context).
 */
final class AsyncEventWatcher {
    private static final Logger log = LoggerFactory.getLogger(AsyncEventWatcher.class);
    private static final int SLICE_MILLIS = 100;
    private static final Map<Long, AsyncEventWatcher> BY_CONTEXT = new HashMap<>(); // guarded by the class

    private final MemorySegment context;
    private final String device;
    private final int fd;
    private final Map<Long, CompletionQueue> queues = new ConcurrentHashMap<>();
    private int users; // guarded by the class
    private boolean stopped; // guarded by this: set before the context may be closed

    private AsyncEventWatcher(MemorySegment context, String device) {
        this.context = context;
        this.device = device;
        this.fd = ibv_context.async_fd(context);
        // Non-blocking, so that a read racing another reader of the fd returns instead of blocking.
        int rc = Posix.setNonBlocking(fd);
        if (rc < 0) {
            log.warn("{}: could not make the async event fd non-blocking (errno {})", device, -rc);
        }
    }

    /** The watcher for {@code context} (an {@code ibv_context*}), started on first use. */
    static AsyncEventWatcher acquire(MemorySegment context, String device) {
        synchronized (AsyncEventWatcher.class) {
            AsyncEventWatcher w = BY_CONTEXT.get(context.address());
            if (w == null) {
                w = new AsyncEventWatcher(context.reinterpret(ibv_context.sizeof()), device);
                BY_CONTEXT.put(context.address(), w);
                Thread.ofPlatform().daemon().name("rdma-async-events-" + device).start(w::run);
            }
            w.users++;
            return w;
        }
    }

    /** Drops one user; the last one stops the thread, which never touches the context afterwards. */
    void release() {
        synchronized (AsyncEventWatcher.class) {
            if (--users > 0) {
                return;
            }
            BY_CONTEXT.remove(context.address());
            synchronized (this) { // waits for an event being handled right now
                stopped = true;
            }
        }
    }

    void watch(CompletionQueue cq) {
        queues.put(cq.address(), cq);
    }

    void unwatch(CompletionQueue cq) {
        queues.remove(cq.address(), cq);
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ibv_async_event.layout());
            while (true) {
                synchronized (this) {
                    if (stopped) {
                        return;
                    }
                }
                int ready = Posix.pollIn(fd, SLICE_MILLIS);
                if (ready < 0) {
                    log.warn("{}: polling the async event fd failed (errno {}); no longer watching", device, -ready);
                    return;
                }
                if (ready == 0) {
                    continue;
                }
                synchronized (this) {
                    // The fd may have been closed and its number reused since poll returned: check first.
                    while (!stopped && Rdma.ibv_get_async_event(context, event) == 0) {
                        try {
                            handle(event);
                        } finally {
                            Rdma.ibv_ack_async_event(event);
                        }
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            log.error("{}: the async event watcher failed; events are no longer read", device, e);
        }
    }

    private void handle(MemorySegment event) {
        AsyncEventType type = AsyncEventType.of(ibv_async_event.event_type(event));
        MemorySegment element = ibv_async_event.element(event);
        switch (type.element()) {
            case CQ -> {
                CompletionQueue cq = queues.get(ibv_async_event.element.cq(element).address());
                boolean first = cq == null || !cq.hasOverrun(); // one event per dropped completion: log the first
                if (cq != null) {
                    cq.overran();
                }
                if (first) {
                    log.error("{}: {} on {}: completions were dropped", device, type, cq != null ? cq : "an unknown CQ");
                }
            }
            case QP -> {
                int qpn = ibv_qp.qp_num(ibv_async_event.element.qp(element).reinterpret(ibv_qp.sizeof()));
                logEvent(type, "QP " + qpn);
            }
            case PORT -> logEvent(type, "port " + ibv_async_event.element.port_num(element));
            default -> logEvent(type, "the device");
        }
    }

    private void logEvent(AsyncEventType type, String what) {
        if (type.isError()) {
            log.warn("{}: {} on {}", device, type, what);
        } else {
            log.debug("{}: {} on {}", device, type, what);
        }
    }
}

package org.rdmapanama.cm;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.internal.Cm;

import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A listening rdma_cm_id: {@code rdma_bind_addr}, {@code rdma_listen}, and
 * {@link #accept} (or {@link #acceptAsync}) for each connect request. Its
 * events arrive through a {@link CmEventLoop}; requests nobody has taken yet
 * wait in a queue. Closing it while another thread waits in {@code accept}
 * makes that accept throw {@link org.rdmapanama.error.ClosedResourceException}, and
 * refuses the requests not taken.
 */
public final class RdmaListener implements AutoCloseable {
    /** A CONNECT_REQUEST whose new cm_id's events already go to {@code events}. */
    private record Request(CmEvent event, CmEndpoint events) {}

    private final CmEventLoop loop;
    private final CmId id;
    private final InetSocketAddress address;
    private final ConnectionOptions options;
    private volatile InetSocketAddress bound;
    /** Request, RdmaConnection (built for a waiter that gave up) or RdmaException (DEVICE_REMOVAL). */
    private final Mailbox<Object> pending = new Mailbox<>(this::discard);

    private RdmaListener(CmEventLoop loop, CmId id, InetSocketAddress address, ConnectionOptions options) {
        this.loop = loop;
        this.id = id;
        this.address = address;
        this.options = options;
    }

    /** Binds to {@code address} (its IP picks the device) and listens with {@code backlog}, on the shared loop. */
    public static RdmaListener bind(InetSocketAddress address, int backlog, ConnectionOptions options)
            throws RdmaException {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be at least 1, got " + backlog);
        }
        return bind(address, backlog, options, CmEventLoop.shared());
    }

    /** {@link #bind(InetSocketAddress, int, ConnectionOptions)} on {@code loop}; its connections use it too. */
    public static RdmaListener bind(InetSocketAddress address, int backlog, ConnectionOptions options, CmEventLoop loop)
            throws RdmaException {
        if (backlog < 1) {
            throw new IllegalArgumentException("backlog must be at least 1, got " + backlog);
        }
        CmId id = CmId.create(loop.channel(), "rdma_cm listener on " + address);
        RdmaListener l = new RdmaListener(loop, id, address, options);
        boolean ok = false;
        try {
            loop.register(id.key(), l.target());
            try (Arena a = Arena.ofConfined()) {
                id.status(Cm.BIND_ADDR, address.toString(), CmId.sockaddr(a, address));
            }
            AcceptWarmup.prepare(id, options); // before listening: no peer waits for it
            id.status(Cm.LISTEN, address.toString(), backlog);
            l.bound = id.address(true);
            ok = true;
            return l;
        } finally {
            if (!ok) {
                loop.unregister(id.key());
                Cleanup.closeQuietly(id);
            }
        }
    }

    /** The address it listens on, with the port rdma_cm chose when asked for port 0. */
    public InetSocketAddress address() {
        InetSocketAddress b = bound;
        return b != null ? b : address;
    }

    /**
     * The device the bound address belongs to, read from the cm_id (rdma_cm
     * picks the device by address, and sets it when binding to one of its
     * interface addresses); its transport comes from the device's attributes.
     * Empty for a wildcard address, which listens on every device.
     */
    public java.util.Optional<org.rdmapanama.device.RdmaDevice> device() throws RdmaException {
        return id.withVerbs(verbs -> { // the listener's cm_id held: a close waits, the context stays open
            if (verbs.equals(java.lang.foreign.MemorySegment.NULL)) {
                return java.util.Optional.empty();
            }
            Bridge.Verbs<org.rdmapanama.verbs.DeviceContext, ?, ?, ?> bridge = Bridge.verbs();
            try (org.rdmapanama.verbs.DeviceContext ctx = bridge.borrowContext(verbs)) { // librdmacm's: closing only unwraps
                return java.util.Optional.of(ctx.device());
            }
        });
    }

    private CmEventLoop.Target target() {
        return new CmEventLoop.Target() {
            @Override
            public void onEvent(CmEvent ev) {
                if (ev.type() == CmEventType.CONNECT_REQUEST) {
                    // Registered before the loop reads on, so none of the new cm_id's events is lost.
                    CmEndpoint events = new CmEndpoint();
                    try {
                        loop.register(ev.id(), events);
                    } catch (RdmaException | RuntimeException e) {
                        CmEventLoop.destroyUnowned(ev.id());
                        return;
                    }
                    offer(new Request(ev, events));
                } else if (ev.type() == CmEventType.DEVICE_REMOVAL) {
                    offer(new CmException("the device of the listener on " + address + " was removed",
                            ev.type(), ev.status()));
                }
                // Anything else on a listening id is noise (e.g. ADDR_CHANGE).
            }

            @Override
            public void onLoopFailure(RdmaException e) {
                offer(e);
            }
        };
    }

    /** Hands {@code item} to the oldest waiter still waiting, or queues it; refuses it once closed. */
    private void offer(Object item) {
        if (!pending.offer(item)) {
            discard(item);
        }
    }

    /** Refuses a request nobody will take (destroying its cm_id rejects it), or closes a built connection. */
    private void discard(Object item) {
        if (item instanceof Request r) {
            refuse(r.event(), r.events());
        } else if (item instanceof RdmaConnection c) {
            Cleanup.closeQuietly(c);
        }
    }

    void refuse(CmEvent request, CmEndpoint events) {
        loop.unregister(request.id());
        events.end(() -> new ClosedResourceException(describe() + " is closed"));
        CmEventLoop.destroyUnowned(request.id());
    }

    private String describe() {
        return "rdma_cm listener on " + address;
    }

    /** The next request (or failure), or a future of it that completes with null at {@code deadline}. */
    private CompletableFuture<Object> take(long deadline) {
        CompletableFuture<Object> f = pending.take();
        if (!f.isDone()) {
            CmEventLoop.Timer t = loop.schedule(deadline, () -> f.complete(null));
            f.whenComplete((x, e) -> t.cancel());
        }
        return f;
    }

    /**
     * Turns what {@link #take} handed over into a connection with its QP (in the caller's thread);
     * a connection built for a waiter that gave up keeps the resources it was built with.
     */
    private RdmaConnection open(Object item, SharedResources shared) throws RdmaException {
        if (item == null || item instanceof RdmaConnection) {
            return (RdmaConnection) item;
        }
        if (item instanceof RdmaException e) {
            throw e;
        }
        Request r = (Request) item;
        return fromRequest(r.events(), r.event(), shared);
    }

    /** Wraps a CONNECT_REQUEST's new cm_id, whose events already go to {@code events}; on failure, refuses it. */
    RdmaConnection fromRequest(CmEndpoint events, CmEvent request, SharedResources shared) throws RdmaException {
        CmId id = null;
        boolean ok = false;
        try {
            id = CmId.own("rdma_cm_id (accepted)", request.id());
            RdmaConnection c = new RdmaConnection(loop, events, id, options, "peer", RdmaConnection.State.REQUESTED,
                    shared);
            c.requested(request);
            ok = true;
            return c;
        } finally {
            if (!ok) {
                loop.unregister(request.id());
                events.end(new CmException("the connect request failed", null, 0));
                if (id != null) {
                    Cleanup.closeQuietly(id);
                } else {
                    CmEventLoop.destroyUnowned(request.id());
                }
            }
        }
    }

    /**
     * Waits for a connect request and returns it as a connection with its
     * QP ready, not yet accepted: read {@link RdmaConnection#peerPrivateData()},
     * register memory, then {@link RdmaConnection#accept} or {@link RdmaConnection#reject}.
     * Returns null when {@code timeout} passes first.
     */
    public RdmaConnection accept(Duration timeout) throws RdmaException, InterruptedException {
        return accept(timeout, null);
    }

    /**
     * {@link #accept(Duration)}, the connection's QP made with {@code shared}'s PD, CQs
     * and SRQ (it owns only its QP and cm_id); null {@code shared}: its own. Waiters with
     * and without shared resources should not share a listener: a connection an
     * {@link #acceptAsync(Duration)} built and then lost to a cancel goes to the next waiter as built.
     */
    public RdmaConnection accept(Duration timeout, SharedResources shared) throws RdmaException, InterruptedException {
        loop.refuseBlockingOnLoop("accept");
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletableFuture<Object> f = take(deadline);
        Object item;
        try {
            item = f.get(Math.max(0, deadline - System.nanoTime()) + CmFutures.GRACE_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException | TimeoutException e) {
            if (!f.cancel(false)) {
                discard(f.join()); // it came in between: nobody takes it now
            }
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable t = RdmaException.unwrap(e);
            if (t instanceof RdmaException r) {
                throw r;
            }
            throw t instanceof RuntimeException r ? r : new IllegalStateException(t);
        }
        return open(item, shared);
    }

    /**
     * {@link #accept} without blocking: the future completes with the next
     * request as a connection (its QP made on the loop thread), with null when
     * {@code timeout} passes first, or exceptionally (closed listener, removed
     * device). Futures are served in the order they were asked for;
     * cancelling one leaves its request to the next.
     */
    public CompletableFuture<RdmaConnection> acceptAsync(Duration timeout) {
        return acceptAsync(timeout, null);
    }

    /** {@link #acceptAsync(Duration)} with {@code shared}'s PD, CQs and SRQ, as {@link #accept(Duration, SharedResources)}. */
    public CompletableFuture<RdmaConnection> acceptAsync(Duration timeout, SharedResources shared) {
        CompletableFuture<RdmaConnection> result = new CompletableFuture<>();
        CompletableFuture<Object> f = take(System.nanoTime() + timeout.toNanos());
        f.whenComplete((item, e) -> {
            if (e != null) {
                result.completeExceptionally(RdmaException.unwrap(e));
                return;
            }
            if (result.isDone() && item instanceof Request) {
                offer(item); // cancelled before it was built: the next waiter builds it its own way
                return;
            }
            RdmaConnection c;
            try {
                c = open(item, shared);
            } catch (RdmaException | RuntimeException x) {
                result.completeExceptionally(x);
                return;
            }
            if (!result.complete(c) && c != null) {
                if (shared == null) {
                    offer(c); // cancelled meanwhile: the next waiter gets it
                } else {
                    discard(c); // its QP is on this waiter's shared resources, which the next may not use
                }
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                f.cancel(false);
            }
        });
        return result;
    }

    /**
     * The next connect request as it came, before anything is made for it, so that its taker chooses the
     * resources of its QP then; null when {@code timeout} passes first, exceptionally as {@link #acceptAsync}.
     * Do not mix with accept on one listener.
     */
    public CompletableFuture<ConnectRequest> requestAsync(Duration timeout) {
        CompletableFuture<ConnectRequest> result = new CompletableFuture<>();
        CompletableFuture<Object> f = take(System.nanoTime() + timeout.toNanos());
        f.whenComplete((item, e) -> {
            if (e != null) {
                result.completeExceptionally(RdmaException.unwrap(e));
            } else if (item instanceof RdmaException x) {
                result.completeExceptionally(x);
            } else if (item instanceof Request r) {
                if (!result.complete(new ConnectRequest(this, r.event(), r.events()))) {
                    offer(item); // cancelled meanwhile: the next waiter gets it
                }
            } else {
                discard(item);
                result.complete(null);
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                f.cancel(false);
            }
        });
        return result;
    }

    /** Set once the listener's cm_id is out of the event loop, so that destroying it is safe. */
    private volatile boolean unregistered;
    private boolean closed; // guarded by this

    /**
     * Stops listening; requests not taken are refused and waiting accepts fail. Idempotent;
     * if the cm_id could not be destroyed yet (a call on it still ran), a later close tries again.
     */
    @Override
    public void close() throws RdmaException {
        boolean retry;
        synchronized (this) {
            retry = closed;
            closed = true;
        }
        if (retry) {
            if (unregistered && !id.isClosed()) {
                id.close(); // outside the monitor: it may wait for a call on the cm_id
            }
            return;
        }
        List<Object> left = pending.end(() -> new ClosedResourceException(describe() + " is closed"));
        loop.unregister(id.key()); // before rdma_destroy_id: see CmEventLoop.dispatch
        unregistered = true;
        try {
            id.close();
        } finally {
            for (Object item : left) {
                discard(item);
            }
        }
    }
}

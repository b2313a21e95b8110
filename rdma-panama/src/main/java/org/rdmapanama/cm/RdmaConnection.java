package org.rdmapanama.cm;

import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.CmStructs;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * An RC connection set up through rdma_cm, the only way iWARP connects (and
 * one way for RoCE and InfiniBand). It owns its cm_id, protection domain,
 * completion queue and queue pair, and closes them in reverse order; made with
 * {@link SharedResources}, it owns only its QP and cm_id. Its
 * cm_id's events arrive through a {@link CmEventLoop} (the process's
 * {@linkplain CmEventLoop#shared() shared} one unless given), which no
 * thread of the connection waits on: setup is asynchronous
 * ({@link #resolveAsync}, {@link #connectAsync}, {@link #acceptAsync},
 * {@link RdmaListener#acceptAsync}) and the blocking calls wait for those futures.
 * <p>
 * Setup has two steps, so that memory can be registered on {@link #protectionDomain()}
 * and its address and rkey sent as private data:
 * <ul>
 *   <li>active side: {@link #resolve} (address and route), then {@link #connect};</li>
 *   <li>passive side: {@link RdmaListener#accept} (a request), then {@link #accept} or {@link #reject}.</li>
 * </ul>
 * Every error event (ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, REJECTED,
 * CONNECT_ERROR, DEVICE_REMOVAL) and every timeout becomes a {@link CmException}
 * (in a future: completes it exceptionally). The futures' stages run on the
 * loop thread unless they use an {@code ...Async} stage with an executor.
 * Once established, {@link #ended()} is the one signal that it ended, for whatever reason.
 */
public final class RdmaConnection implements AutoCloseable {
    private static final class Log { // lazily: see org.rdmapanama.internal.Cleanup
        static final Logger LOG = LoggerFactory.getLogger(RdmaConnection.class);
    }

    enum State { RESOLVED, REQUESTED, ESTABLISHED, DISCONNECTED, CLOSED }

    final CmEventLoop loop;
    final CmEndpoint events;
    private final CmId id;
    private final ConnectionOptions options;
    private final ConnectionResources resources;
    private final String peer;
    volatile State state;
    private volatile byte[] peerPrivateData = new byte[0];
    private int peerInitiatorDepth;
    private int peerResponderResources;
    final ConnectionEnding ending = new ConnectionEnding(this);

    RdmaConnection(CmEventLoop loop, CmEndpoint events, CmId id, ConnectionOptions options, String peer,
                   State state, SharedResources shared) throws RdmaException {
        this.loop = loop;
        this.events = events;
        this.id = id;
        this.options = options;
        this.peer = peer;
        this.state = state;
        this.resources = shared == null ? new ConnectionResources(id, options, peer)
                : new ConnectionResources(id, options, peer, shared);
        events.watch(ending::onEvent);
    }

    /**
     * Active side, step 1: resolves {@code remote}'s address and route (from
     * {@code local}'s device, if given) and creates the PD, CQ and QP on the
     * device rdma_cm chose.
     */
    public static RdmaConnection resolve(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                         Duration timeout) throws RdmaException, InterruptedException {
        return ActiveSetup.resolve(remote, local, options, timeout, null);
    }

    /** {@link #resolve}, making only the QP, with {@code shared}'s PD, CQs and SRQ (also below). */
    public static RdmaConnection resolve(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                         Duration timeout, SharedResources shared)
            throws RdmaException, InterruptedException {
        return ActiveSetup.resolve(remote, local, options, timeout, Objects.requireNonNull(shared, "shared"));
    }

    /**
     * {@link #resolve} without blocking, on the {@linkplain CmEventLoop#shared() shared} loop:
     * the future completes with the connection, or with a {@link CmException}
     * (or another {@link RdmaException}) by {@code timeout}. Cancelling it frees what was made.
     */
    public static CompletableFuture<RdmaConnection> resolveAsync(InetSocketAddress remote, InetSocketAddress local,
                                                                 ConnectionOptions options, Duration timeout) {
        try {
            return resolveAsync(remote, local, options, timeout, CmEventLoop.shared());
        } catch (RdmaException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** {@link #resolveAsync(InetSocketAddress, InetSocketAddress, ConnectionOptions, Duration)} on {@code loop}. */
    public static CompletableFuture<RdmaConnection> resolveAsync(InetSocketAddress remote, InetSocketAddress local,
                                                                 ConnectionOptions options, Duration timeout,
                                                                 CmEventLoop loop) {
        return ActiveSetup.resolveAsync(remote, local, options, timeout, loop, null);
    }

    public static CompletableFuture<RdmaConnection> resolveAsync(InetSocketAddress remote, InetSocketAddress local,
                                                                 ConnectionOptions options, Duration timeout,
                                                                 CmEventLoop loop, SharedResources shared) {
        return ActiveSetup.resolveAsync(remote, local, options, timeout, loop,
                Objects.requireNonNull(shared, "shared"));
    }

    /**
     * Both active steps without blocking: resolve, then connect with
     * {@code privateData}, all within {@code timeout}; a failed connect closes
     * the connection. For private data that needs the connection's PD (an MR's
     * key), chain {@link #resolveAsync} and {@link #connectAsync} instead.
     */
    public static CompletableFuture<RdmaConnection> connectAsync(InetSocketAddress remote, InetSocketAddress local,
                                                                 ConnectionOptions options, byte[] privateData,
                                                                 Duration timeout, CmEventLoop loop) {
        return ActiveSetup.connectAsync(remote, local, options, privateData, timeout, loop, null);
    }

    public static CompletableFuture<RdmaConnection> connectAsync(InetSocketAddress remote, InetSocketAddress local,
                                                                 ConnectionOptions options, byte[] privateData,
                                                                 Duration timeout, CmEventLoop loop,
                                                                 SharedResources shared) {
        return ActiveSetup.connectAsync(remote, local, options, privateData, timeout, loop,
                Objects.requireNonNull(shared, "shared"));
    }

    /** Passive side: what the CONNECT_REQUEST carried. */
    void requested(CmEvent request) {
        peerPrivateData = request.privateData();
        peerInitiatorDepth = request.initiatorDepth();
        peerResponderResources = request.responderResources();
    }

    /** Active side, step 2: {@code rdma_connect} with {@code privateData}; waits for ESTABLISHED. */
    public void connect(byte[] privateData, Duration timeout) throws RdmaException, InterruptedException {
        loop.refuseBlockingOnLoop("connect");
        long deadline = System.nanoTime() + timeout.toNanos();
        CmFutures.await(startConnect(privateData, deadline), deadline, "timed out connecting to " + peer);
    }

    /**
     * {@link #connect} without blocking: the future completes with this
     * connection once established, or with a {@link CmException} by
     * {@code timeout}. A wrong state or oversized private data throws at once.
     */
    public CompletableFuture<RdmaConnection> connectAsync(byte[] privateData, Duration timeout) {
        try {
            return startConnect(privateData, System.nanoTime() + timeout.toNanos());
        } catch (RdmaException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<RdmaConnection> startConnect(byte[] privateData, long deadline) throws RdmaException {
        requireState(State.RESOLVED, "connect");
        PrivateData.check(resources.context.transport(), privateData, true);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment param = connParam(a, privateData, options.rdmaReadDepth(), options.rdmaReadDepth());
            id.status(Cm.CONNECT, describe(), param);
        } catch (CmException e) {
            throw e;
        } catch (RdmaException e) {
            // iWARP connects over TCP at once: a refused connection fails here, not as an event.
            throw new CmException("connecting to " + peer + ": "
                    + Errno.message("rdma_connect", resources.context.device().name(), e.errno()), null, -e.errno());
        }
        return established(events.expect(loop, CmEventType.ESTABLISHED, deadline, "connecting to " + peer), true);
    }

    /** Marks the connection ESTABLISHED when {@code f} completes, unless it was closed meanwhile. */
    private CompletableFuture<RdmaConnection> established(CompletableFuture<CmEvent> f, boolean takePrivateData) {
        CompletableFuture<RdmaConnection> r = f.thenApply(ev -> {
            synchronized (this) {
                if (state == State.CLOSED) {
                    throw new CompletionException(new ClosedResourceException(describe() + " is closed"));
                }
                if (takePrivateData) {
                    peerPrivateData = ev.privateData();
                }
                state = State.ESTABLISHED;
            }
            return this;
        });
        r.whenComplete((c, e) -> f.cancel(false)); // a cancelled result gives up the wait
        return r;
    }

    /** Passive side: {@code rdma_accept} with {@code privateData}; waits for ESTABLISHED. */
    public void accept(byte[] privateData, Duration timeout) throws RdmaException, InterruptedException {
        loop.refuseBlockingOnLoop("accept");
        long deadline = System.nanoTime() + timeout.toNanos();
        CmFutures.await(startAccept(privateData, deadline), deadline, "timed out accepting a connection");
    }

    /** {@link #accept} without blocking, as {@link #connectAsync} is to {@link #connect}. */
    public CompletableFuture<RdmaConnection> acceptAsync(byte[] privateData, Duration timeout) {
        try {
            return startAccept(privateData, System.nanoTime() + timeout.toNanos());
        } catch (RdmaException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<RdmaConnection> startAccept(byte[] privateData, long deadline) throws RdmaException {
        requireState(State.REQUESTED, "accept");
        PrivateData.check(resources.context.transport(), privateData, false);
        try (Arena a = Arena.ofConfined()) {
            // Never promise more reads than the peer asked for, or than we offer.
            int responder = Math.min(options.rdmaReadDepth(), peerInitiatorDepth);
            int initiator = Math.min(options.rdmaReadDepth(), peerResponderResources);
            id.status(Cm.ACCEPT, describe(), connParam(a, privateData, responder, initiator));
        }
        return established(events.expect(loop, CmEventType.ESTABLISHED, deadline, "accepting a connection"), false);
    }

    /** Passive side: {@code rdma_reject}, with optional private data for the peer. */
    public void reject(byte[] privateData) throws RdmaException {
        requireState(State.REQUESTED, "reject");
        PrivateData.check(resources.context.transport(), privateData, false);
        try (Arena a = Arena.ofConfined()) {
            id.status(Cm.REJECT, describe(), PrivateData.segment(a, privateData), (byte) privateData.length);
        }
        state = State.DISCONNECTED;
    }

    /** rdma_connect's or rdma_accept's parameters; the ACK timeout, set on the cm_id, goes with them. */
    private MemorySegment connParam(Arena a, byte[] privateData, int responder, int initiator) throws RdmaException {
        id.ackTimeout(options.ackTimeout());
        return CmStructs.connParam(a, privateData, responder, initiator, options.retryCount(), options.rnrRetryCount());
    }

    /**
     * Waits for the next connection event (DISCONNECTED after the peer left,
     * DEVICE_REMOVAL, ...), or returns null after {@code timeout}.
     */
    public CmEventType awaitEvent(Duration timeout) throws RdmaException, InterruptedException {
        return EventWaits.next(this, timeout);
    }

    /** Waits up to {@code timeout} for the peer to disconnect; true if it did. */
    public boolean awaitDisconnect(Duration timeout) throws RdmaException, InterruptedException {
        return EventWaits.disconnect(this, timeout);
    }

    /**
     * Completes once, with the first of: DISCONNECTED or DEVICE_REMOVAL after it was established
     * (on the loop thread, waited for or not; its QP then moved to ERR, so that outstanding work
     * flushes, and whoever polls the flushes finds this done), {@link #fail}, {@link #close}. A new view each call: completing it ends nothing.
     */
    public CompletableFuture<ConnectionEnd> ended() {
        return ending.view();
    }

    /**
     * Ends the connection as FAILED (the layer above saw a failed completion or
     * a fatal QP event): moves its QP to ERR, disconnects so the peer learns of
     * it, and completes {@link #ended()}. False, doing nothing, if it had ended already. Does not block.
     */
    public boolean fail(String detail) {
        return ending.fail(detail);
    }

    /** DISCONNECTED if it was ESTABLISHED; returns the state it was in. */
    synchronized State markDisconnected() {
        State was = state;
        state = was == State.ESTABLISHED ? State.DISCONNECTED : was;
        return was;
    }

    public boolean isEstablished() {
        return state == State.ESTABLISHED;
    }

    public DeviceContext context() {
        return resources.context;
    }

    public ProtectionDomain protectionDomain() {
        return resources.pd;
    }

    /** The CQ of its sends and receives; with {@link SharedResources}, the shared send CQ. */
    public CompletionQueue completionQueue() {
        return resources.cq;
    }

    public QueuePair queuePair() {
        return resources.qp;
    }

    /** This end's address (the device's, and the port rdma_cm chose); null before it is known. */
    public InetSocketAddress localAddress() throws RdmaException {
        return id.address(true);
    }

    /** The peer's address; null before it is known (an active side knows it once resolved). */
    public InetSocketAddress peerAddress() throws RdmaException {
        return id.address(false);
    }

    /** What the peer sent as private data (in its connect request, or its accept). */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** {@code rdma_disconnect}: flushes outstanding work; the peer sees DISCONNECTED. */
    public void disconnect() throws RdmaException {
        synchronized (this) {
            if (state != State.ESTABLISHED) {
                return;
            }
            state = State.DISCONNECTED;
        }
        id.status(Cm.DISCONNECT, describe());
    }

    private void requireState(State wanted, String op) {
        if (state != wanted) {
            throw new IllegalStateException("cannot " + op + " " + describe() + ": it is " + state
                    + (wanted == State.RESOLVED ? " (connect follows resolve)" : " (accept follows a request)"));
        }
    }

    private String describe() {
        return "connection with " + peer + " on " + resources.context.device().name();
    }

    /**
     * Disconnects if connected, then frees QP, CQ, PD and cm_id, in that order
     * (with {@link SharedResources}: QP and cm_id), and completes {@link #ended()} as CLOSED.
     * A wait for this connection's events (a blocking or asynchronous connect,
     * accept or awaitEvent) fails at once with {@link org.rdmapanama.error.ClosedResourceException}. Idempotent.
     * If the verbs objects cannot close yet ({@link org.rdmapanama.error.ResourceBusyException}: a
     * call on another thread still uses one; {@link org.rdmapanama.error.ResourceInUseException}),
     * that exception is thrown, the cm_id is kept (its device context must outlive them), and
     * a later close tries again.
     */
    @Override
    public void close() throws RdmaException {
        State was;
        boolean retry;
        synchronized (this) {
            was = state;
            retry = was == State.CLOSED && resources.teardownPending();
            if (was != State.CLOSED) {
                state = State.CLOSED;
            }
        }
        if (retry) {
            resources.retryTeardown(); // outside the monitor: it may wait for a call on another thread
        }
        if (was == State.CLOSED) {
            return;
        }
        if (was == State.ESTABLISHED) {
            disconnectQuietly("closing");
        }
        events.end(() -> new ClosedResourceException(describe() + " is closed"));
        loop.unregister(id.key()); // before rdma_destroy_id: see CmEventLoop.dispatch
        try {
            // Before ESTABLISHED the loop may be handling the connect's response or a reject, with the QP.
            resources.teardownOnLoop(was == State.RESOLVED || was == State.REQUESTED ? loop : null);
        } finally {
            ending.end(ConnectionEnd.Reason.CLOSED, describe() + " was closed");
        }
    }

    /** {@code rdma_disconnect} when ending anyway: a failure changes nothing. */
    void disconnectQuietly(String while_) {
        try {
            id.status(Cm.DISCONNECT, describe());
        } catch (RdmaException | IllegalStateException e) {
            Log.LOG.debug("rdma_disconnect while {} {}: {}", while_, describe(), e.getMessage());
        }
    }

    @Override
    public String toString() {
        return describe() + " (" + state + ")";
    }
}

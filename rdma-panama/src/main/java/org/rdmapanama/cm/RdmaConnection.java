package org.rdmapanama.cm;

import org.rdmapanama.CompletionQueue;
import org.rdmapanama.DeviceContext;
import org.rdmapanama.ProtectionDomain;
import org.rdmapanama.QueuePair;
import org.rdmapanama.QueuePairConfig;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.ibv_qp_init_attr;
import org.rdmapanama.ffi.rdma_cm_id;
import org.rdmapanama.ffi.rdma_conn_param;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.Cleanup;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.Errno;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * An RC connection set up through rdma_cm, the only way iWARP connects (and
 * one way for RoCE and InfiniBand). It owns its event channel, cm_id,
 * protection domain, completion queue and queue pair, and closes them in
 * reverse order.
 * <p>
 * Setup has two steps, so that memory can be registered on {@link #protectionDomain()}
 * and its address and rkey sent as private data:
 * <ul>
 *   <li>active side: {@link #resolve} (address and route), then {@link #connect};</li>
 *   <li>passive side: {@link RdmaListener#accept} (a request), then {@link #accept} or {@link #reject}.</li>
 * </ul>
 * Every error event (ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, REJECTED,
 * CONNECT_ERROR, DEVICE_REMOVAL) and every timeout becomes a {@link CmException}.
 */
public final class RdmaConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RdmaConnection.class);

    enum State { RESOLVED, REQUESTED, ESTABLISHED, DISCONNECTED, CLOSED }

    private final EventChannel channel;
    private final CmId id;
    private final ConnectionOptions options;
    private final DeviceContext context;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final String peer;
    private volatile State state;
    private volatile byte[] peerPrivateData = new byte[0];
    private int peerInitiatorDepth;
    private int peerResponderResources;

    private RdmaConnection(EventChannel channel, CmId id, ConnectionOptions options, String peer, State state)
            throws RdmaException {
        this.channel = channel;
        this.id = id;
        this.options = options;
        this.peer = peer;
        this.state = state;
        boolean ok = false;
        DeviceContext ctx = null;
        try {
            ctx = verbs().borrowContext(id.verbs());
            this.context = ctx;
            this.pd = ctx.allocateProtectionDomain();
            this.cq = ctx.createCompletionQueue(options.cqSize());
            QueuePairConfig config = QueuePairConfig.rc(cq).withQueueDepth(options.sendDepth(), options.recvDepth())
                    .withSge(options.sendSge(), options.recvSge()).withInline(options.inlineData())
                    .withSignalAll(options.signalAll());
            this.qp = createQp(config);
            ok = true;
        } finally {
            if (!ok && ctx != null) {
                ctx.close();
            }
        }
    }

    /** The verbs objects' package-private parts, through {@link Bridge}. */
    private static Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> verbs() {
        return Bridge.verbs();
    }

    private QueuePair createQp(QueuePairConfig config) throws RdmaException {
        Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> verbs = verbs();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_init_attr.layout());
            verbs.fillQpInitAttr(attr, pd, config);
            MemorySegment idHandle = id.id();
            // rdma_destroy_qp also clears id->qp, which rdma_cm reads.
            return verbs.createQueuePair(pd, config, attr, () -> {
                Cm.CREATE_QP.status(describe(), idHandle, verbs.pdHandle(pd), attr);
                return rdma_cm_id.qp(idHandle);
            }, q -> Cm.destroyQp(idHandle));
        }
    }

    /**
     * Active side, step 1: resolves {@code remote}'s address and route (from
     * {@code local}'s device, if given) and creates the PD, CQ and QP on the
     * device rdma_cm chose.
     */
    public static RdmaConnection resolve(InetSocketAddress remote, InetSocketAddress local, ConnectionOptions options,
                                         Duration timeout) throws RdmaException, InterruptedException {
        EventChannel channel = EventChannel.create(); // first use loads and links librdmacm: not part of the budget
        long deadline = System.nanoTime() + timeout.toNanos();
        CmId id = null;
        boolean ok = false;
        try {
            id = CmId.create(channel, "rdma_cm_id to " + remote);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment src = local == null ? MemorySegment.NULL : CmId.sockaddr(a, local);
                MemorySegment dst = CmId.sockaddr(a, remote);
                Cm.RESOLVE_ADDR.status(remote.toString(), id.id(), src, dst, millis(deadline));
            }
            expect(channel, CmEventType.ADDR_RESOLVED, deadline, "resolving the address " + remote);
            Cm.RESOLVE_ROUTE.status(remote.toString(), id.id(), millis(deadline));
            expect(channel, CmEventType.ROUTE_RESOLVED, deadline, "resolving the route to " + remote);
            RdmaConnection c = new RdmaConnection(channel, id, options, remote.toString(), State.RESOLVED);
            ok = true;
            return c;
        } finally {
            if (!ok) {
                Cleanup.closeQuietly(id);
                Cleanup.closeQuietly(channel);
            }
        }
    }

    /** Passive side: wraps a CONNECT_REQUEST's new cm_id, moved to a channel of its own. */
    static RdmaConnection fromRequest(CmEvent request, ConnectionOptions options) throws RdmaException {
        EventChannel channel = null;
        CmId id = null;
        boolean ok = false;
        try {
            id = CmId.own("rdma_cm_id (accepted)", request.id());
            channel = EventChannel.create();
            Cm.MIGRATE_ID.status("accepted cm_id", id.id(), channel.channel());
            RdmaConnection c = new RdmaConnection(channel, id, options, "peer", State.REQUESTED);
            c.peerPrivateData = request.privateData();
            c.peerInitiatorDepth = request.initiatorDepth();
            c.peerResponderResources = request.responderResources();
            ok = true;
            return c;
        } finally {
            if (!ok) {
                Cleanup.closeQuietly(id);
                Cleanup.closeQuietly(channel);
            }
        }
    }

    /** Active side, step 2: {@code rdma_connect} with {@code privateData}; waits for ESTABLISHED. */
    public void connect(byte[] privateData, Duration timeout) throws RdmaException, InterruptedException {
        requireState(State.RESOLVED, "connect");
        checkPrivateData(privateData, true);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment param = connParam(a, privateData, options.rdmaReadDepth(), options.rdmaReadDepth());
            Cm.CONNECT.status(describe(), id.id(), param);
        } catch (CmException e) {
            throw e;
        } catch (RdmaException e) {
            // iWARP connects over TCP at once: a refused connection fails here, not as an event.
            throw new CmException("connecting to " + peer + ": "
                    + Errno.message("rdma_connect", context.device().name(), e.errno()), null, e.errno());
        }
        CmEvent ev = expect(channel, CmEventType.ESTABLISHED, deadline, "connecting to " + peer);
        peerPrivateData = ev.privateData();
        state = State.ESTABLISHED;
    }

    /** Passive side: {@code rdma_accept} with {@code privateData}; waits for ESTABLISHED. */
    public void accept(byte[] privateData, Duration timeout) throws RdmaException, InterruptedException {
        requireState(State.REQUESTED, "accept");
        checkPrivateData(privateData, false);
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena a = Arena.ofConfined()) {
            // Never promise more reads than the peer asked for, or than we offer.
            int responder = Math.min(options.rdmaReadDepth(), peerInitiatorDepth);
            int initiator = Math.min(options.rdmaReadDepth(), peerResponderResources);
            Cm.ACCEPT.status(describe(), id.id(), connParam(a, privateData, responder, initiator));
        }
        expect(channel, CmEventType.ESTABLISHED, deadline, "accepting a connection");
        state = State.ESTABLISHED;
    }

    /** Passive side: {@code rdma_reject}, with optional private data for the peer. */
    public void reject(byte[] privateData) throws RdmaException {
        requireState(State.REQUESTED, "reject");
        checkPrivateData(privateData, false);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment data = privateData.length == 0 ? MemorySegment.NULL
                    : a.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, privateData);
            Cm.REJECT.status(describe(), id.id(), data, (byte) privateData.length);
        }
        state = State.DISCONNECTED;
    }

    private MemorySegment connParam(Arena a, byte[] privateData, int responder, int initiator) {
        MemorySegment p = a.allocate(rdma_conn_param.layout());
        if (privateData.length > 0) {
            rdma_conn_param.private_data(p, a.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, privateData));
            rdma_conn_param.private_data_len(p, (byte) privateData.length);
        }
        rdma_conn_param.responder_resources(p, (byte) responder);
        rdma_conn_param.initiator_depth(p, (byte) initiator);
        rdma_conn_param.retry_count(p, (byte) options.retryCount());
        rdma_conn_param.rnr_retry_count(p, (byte) options.rnrRetryCount());
        return p;
    }

    private void checkPrivateData(byte[] data, boolean connecting) {
        Transport t = context.transport();
        int max = connecting ? t.maxConnectPrivateData() : t.maxAcceptPrivateData();
        max = Math.min(max, 255); // private_data_len is a uint8_t
        if (data.length > max) {
            throw new IllegalArgumentException("private data of " + data.length + " bytes exceeds the " + max
                    + "-byte limit for " + (connecting ? "connect" : "accept") + " on "
                    + context.transport().displayName());
        }
    }

    private static int millis(long deadline) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (deadline - System.nanoTime()) / 1_000_000));
    }

    private static CmEvent expect(EventChannel channel, CmEventType wanted, long deadline, String what)
            throws RdmaException, InterruptedException {
        CmEvent ev = channel.next(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        if (ev == null) {
            throw new CmException("timed out " + what + " (no " + wanted.cName() + ")", null, 0);
        }
        if (ev.type() != wanted) {
            throw new CmException(what + " failed: " + ev.type().cName() + describeStatus(ev), ev.type(), ev.status());
        }
        return ev;
    }

    private static String describeStatus(CmEvent ev) {
        if (ev.status() == 0) {
            return "";
        }
        return ev.type() == CmEventType.REJECTED
                ? " (reject reason " + ev.status() + rejectReason(ev.status()) + ")"
                : " (status " + ev.status() + ": " + Errno.describe(Math.abs(ev.status())) + ")";
    }

    /** The IB CM reject reasons a user meets (IBTA table 112), and iWARP's "connection refused". */
    private static String rejectReason(int status) {
        return switch (status) {
            case 8 -> ": invalid service ID, nobody listens on that port";
            case 28 -> ": consumer defined, the peer rejected the connection";
            case -111, 111 -> ": connection refused, nobody listens on that port";
            default -> "";
        };
    }

    /**
     * Waits for the next connection event (DISCONNECTED after the peer left,
     * DEVICE_REMOVAL, ...), or returns null after {@code timeout}.
     */
    public CmEventType awaitEvent(Duration timeout) throws RdmaException, InterruptedException {
        CmEvent ev = channel.next(timeout);
        if (ev == null) {
            return null;
        }
        if (ev.type() == CmEventType.DISCONNECTED || ev.type() == CmEventType.DEVICE_REMOVAL) {
            state = State.DISCONNECTED;
            // Flush what is outstanding (WR_FLUSH_ERR) instead of leaving it pending
            // forever: neither rxe nor siw moves the QP to ERR by itself.
            try {
                qp.toError();
            } catch (RdmaException | IllegalStateException e) {
                log.debug("moving {} to ERR after {}: {}", describe(), ev.type(), e.getMessage());
            }
        }
        return ev.type();
    }

    /** Waits up to {@code timeout} for the peer to disconnect; true if it did. */
    public boolean awaitDisconnect(Duration timeout) throws RdmaException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (state != State.DISCONNECTED) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || awaitEvent(Duration.ofNanos(left)) == null) {
                return state == State.DISCONNECTED;
            }
        }
        return true;
    }

    public boolean isEstablished() {
        return state == State.ESTABLISHED;
    }

    public DeviceContext context() {
        return context;
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public CompletionQueue completionQueue() {
        return cq;
    }

    public QueuePair queuePair() {
        return qp;
    }

    /** What the peer sent as private data (in its connect request, or its accept). */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** {@code rdma_disconnect}: flushes outstanding work; the peer sees DISCONNECTED. */
    public void disconnect() throws RdmaException {
        if (state == State.ESTABLISHED) {
            state = State.DISCONNECTED;
            Cm.DISCONNECT.status(describe(), id.id());
        }
    }

    private void requireState(State wanted, String op) {
        if (state != wanted) {
            throw new IllegalStateException("cannot " + op + " " + describe() + ": it is " + state
                    + (wanted == State.RESOLVED ? " (connect follows resolve)" : " (accept follows a request)"));
        }
    }

    private String describe() {
        return "connection with " + peer + " on " + (context == null ? "?" : context.device().name());
    }

    /** Disconnects if connected, then frees QP, CQ, PD, cm_id and channel, in that order. Idempotent. */
    @Override
    public void close() throws RdmaException {
        if (state == State.CLOSED) {
            return;
        }
        try {
            disconnect();
        } catch (RdmaException e) {
            log.debug("rdma_disconnect while closing {}: {}", describe(), e.getMessage());
        }
        state = State.CLOSED;
        RdmaException first = null;
        for (AutoCloseable r : new AutoCloseable[] {context, id, channel}) {
            try {
                r.close(); // the context closes QP, CQ and PD first
            } catch (RdmaException e) {
                first = first == null ? e : first;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return describe() + " (" + state + ")";
    }
}

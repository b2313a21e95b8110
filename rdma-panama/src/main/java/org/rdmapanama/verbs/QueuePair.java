package org.rdmapanama.verbs;

import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.error.ClosedResourceException;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.QpAttributes;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * {@code struct ibv_qp}. Posting ({@link #postSend}, {@link #postRecv}) is
 * the data path: one call through {@code context->ops} with a pre-built,
 * reused work request, no allocation. State changes are explicit:
 * RESET → {@link #toInit} → {@link #toRtr} → {@link #toRts}; rdma_cm does
 * them itself for the QPs it creates.
 * <p>
 * What the transport lacks is refused when a work request is built for this
 * QP, never at post time: see {@link SendRequest}.
 */
public final class QueuePair extends NativeResource {
    /** The Q_Key UD QPs use unless told otherwise (perftest's and rdma_cm's). */
    public static final int DEFAULT_QKEY = 0x11111111;

    private final ProtectionDomain pd;
    private final DeviceContext context;
    private final QueuePairConfig config;
    private final int qpNumber;
    private final int maxInlineData;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final MemorySegment badWr;
    private final Bridge.Destroyer destroyer;
    private final Dependent asUser; // this QP, as a user of its CQs and SRQ
    private final List<SendRequest> sendRequests = new ArrayList<>(); // guarded by itself

    private QueuePair(ProtectionDomain pd, Native qp, QueuePairConfig config, MemorySegment initAttr,
                      Bridge.Destroyer destroyer, Dependent asUser) {
        super("QueuePair " + config.type() + " " + QpAttributes.qpNumber(qp.struct()) + " on "
                + pd.context().device().name(), qp, pd);
        this.pd = pd;
        this.context = pd.context();
        this.config = config;
        this.qpNumber = QpAttributes.qpNumber(handle());
        this.maxInlineData = QueuePairInit.grantedInline(initAttr);
        this.maxSendSge = Math.max(config.maxSendSge(), 1);
        this.maxRecvSge = Math.max(config.maxRecvSge(), 1);
        this.postSendFn = context.postSendFn;
        this.postRecvFn = context.postRecvFn;
        // bad_wr is written by the provider; a global-scope alias avoids a second
        // arena acquire per post (the QP handle's acquire covers this memory).
        this.badWr = MemorySegment.ofAddress(arena().allocate(ADDRESS).address()).reinterpret(ADDRESS.byteSize());
        this.destroyer = destroyer;
        this.asUser = asUser;
        asUser.name(description());
    }

    static QueuePair create(ProtectionDomain pd, QueuePairConfig config) throws RdmaException {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateInit(scratch);
            QueuePairInit.fill(attr, pd, config);
            String what = pd.context().device().name() + ", " + config.type() + ", send " + config.maxSendWr() + "x"
                    + config.maxSendSge() + ", recv " + config.maxRecvWr() + "x" + config.maxRecvSge() + ", inline "
                    + config.maxInlineData();
            Bridge.Destroyer destroyer = raw -> Verbs.Calls.DESTROY_QP.status(
                    "qp " + QpAttributes.qpNumber(raw), raw);
            return withHolds(pd, config, asUser -> pd.ownChild(h -> Verbs.Calls.CREATE_QP.pointer(what, h, attr),
                    QpAttributes.QP_SIZE, destroyer::destroy,
                    n -> new QueuePair(pd, n, config, attr, destroyer, asUser), false));
        }
    }

    /** Creates a QP made by {@code create} (ibv_create_qp or rdma_create_qp) while its CQs and SRQ are held. */
    static QueuePair withHolds(ProtectionDomain pd, QueuePairConfig c, Creator create) throws RdmaException {
        // Held before the C object exists: a CQ must not close between ibv_create_qp and the wrapper.
        Dependent asUser = new Dependent("a QueuePair being created on " + pd.context().device().name());
        List<NativeResource> held = new ArrayList<>(3);
        try {
            for (NativeResource r : new NativeResource[] {c.sendCq(), c.recvCq(), c.srq()}) {
                if (r != null && !held.contains(r)) {
                    r.addUser(asUser);
                    held.add(r);
                }
            }
            QueuePair qp = create.create(asUser);
            held.clear(); // the QP releases them when it closes
            return qp;
        } finally {
            for (NativeResource r : held) {
                r.removeUser(asUser);
            }
        }
    }

    @FunctionalInterface
    interface Creator {
        QueuePair create(Dependent asUser) throws RdmaException;
    }

    public int qpNumber() {
        return qpNumber;
    }

    public QueuePairType type() {
        return config.type();
    }

    public QueuePairConfig config() {
        return config;
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    public DeviceContext context() {
        return context;
    }

    /** Inline bytes the provider granted (at least what was asked). */
    public int maxInlineData() {
        return maxInlineData;
    }

    int maxSendSge() {
        return maxSendSge;
    }

    int maxRecvSge() {
        return maxRecvSge;
    }

    /** A reusable chain of up to {@code chainLength} send WRs, each with up to {@code maxSge} SGEs. */
    public SendRequest newSendRequest(int chainLength, int maxSge) {
        checkOpen();
        SendRequest request = new SendRequest(this, arena(), chainLength, maxSge);
        synchronized (sendRequests) {
            sendRequests.add(request);
        }
        return request;
    }

    /** A reusable chain of up to {@code chainLength} receive WRs, each with up to {@code maxSge} SGEs. */
    public ReceiveRequest newReceiveRequest(int chainLength, int maxSge) {
        checkOpen();
        if (config.srq() != null) {
            throw new IllegalStateException(this + " receives through its shared receive queue; post there");
        }
        return new ReceiveRequest(this, arena(), chainLength, Math.min(maxSge, maxRecvSge), description());
    }

    /**
     * A poster for this thread alone, without the per-call atomic acquire of
     * {@link #postSend} and {@link #postRecv}. While it is open this QP
     * refuses to close; close it on this thread first. See {@link ConfinedPoster}.
     */
    public ConfinedPoster confinedPoster() {
        checkOpen();
        return new ConfinedPoster(this);
    }

    MemorySegment qp() {
        return handle();
    }

    long badWrAddress() {
        return badWr.address();
    }

    MemorySegment postSendFn() {
        return postSendFn;
    }

    MemorySegment postRecvFn() {
        return postRecvFn;
    }

    /**
     * {@code ibv_post_send} of the WRs {@code request} holds. The request may
     * be changed and posted again as soon as this returns (inline data is
     * copied; other data is read by the device until the completion).
     */
    public void postSend(SendRequest request) throws RdmaException {
        if (request.owner != this) {
            throw new IllegalArgumentException("this SendRequest was built for " + request.owner);
        }
        if (request.closed) {
            throw new ClosedResourceException("this SendRequest of " + this + " is closed");
        }
        int rc;
        try {
            rc = DataPath.post(postSendFn, handle(), request.first(), badWr);
        } catch (IllegalStateException e) {
            throw translate(e);
        }
        if (rc != 0) {
            throw postFailure("ibv_post_send", rc);
        }
    }

    /** {@code ibv_post_recv} of the WRs {@code request} holds. */
    public void postRecv(ReceiveRequest request) throws RdmaException {
        if (request.owner != this) { // its memory lives and dies with its owner
            throw new IllegalArgumentException("this ReceiveRequest was built for " + request.owner + ", not " + this);
        }
        int rc;
        try {
            rc = DataPath.post(postRecvFn, handle(), request.first(), badWr);
        } catch (IllegalStateException e) {
            throw translate(e);
        }
        if (rc != 0) {
            throw postFailure("ibv_post_recv", rc);
        }
    }

    RdmaException postFailure(String verb, int rc) {
        int errno = -rc;
        String hint = errno == Errno.ENOMEM ? " (the queue is full: poll completions first, or make it deeper)"
                : errno == Errno.EINVAL ? " (the QP is in the wrong state, or a WR exceeds its limits)" : "";
        return Errno.failure(verb, description(), rc, hint);
    }

    // --- state transitions (rc_pingpong's pp_connect_ctx, in steps; attributes in QpTransition) ---

    /** RESET → INIT on {@code port}; for RC, {@code remoteAccess} is what the peer may do here. */
    public void toInit(int port, Access... remoteAccess) throws RdmaException {
        checkPort(port);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            modify(attr, QpTransition.init(attr, type(), port, remoteAccess), "RESET -> INIT");
        }
    }

    /**
     * INIT → RTR, toward {@code remote}. With {@code gidIndex >= 0} the
     * packets carry a GRH from that source GID (required on RoCE); with -1
     * they are addressed by LID only (InfiniBand within a subnet).
     */
    public void toRtr(QpAddress remote, int port, int gidIndex, int mtuBytes) throws RdmaException {
        checkPort(port);
        QpTransition.mtuEnum(mtuBytes);
        if (gidIndex < 0 && context.device().port(port).linkLayer() == LinkLayer.ETHERNET) {
            throw new IllegalArgumentException(context.device().name() + " port " + port
                    + " is RoCE: a GID index is required (packets need a GRH)");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            int mask = QpTransition.rtr(attr, type(), remote, port, gidIndex, mtuBytes,
                    context.capabilities().maxQpRdAtom());
            modify(attr, mask, "INIT -> RTR toward " + remote);
        }
    }

    /** RTR → RTS, sending from {@code psn}; RC gets perftest's timeout and retry counts. */
    public void toRts(int psn) throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            modify(attr, QpTransition.rts(attr, type(), psn, context.capabilities().maxQpInitRdAtom()), "RTR -> RTS");
        }
    }

    /** Moves to ERR: outstanding WRs complete with {@link WcStatus#WR_FLUSH_ERR}. */
    public void toError() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            modify(attr, QpTransition.state(attr, QpState.ERR), "-> ERR");
        }
    }

    /** Back to RESET, to be brought up again (after an error, say). */
    public void toReset() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            modify(attr, QpTransition.state(attr, QpState.RESET), "-> RESET");
        }
    }

    /** {@code ibv_query_qp}: the current state. */
    public QpState state() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = QpAttributes.allocateAttr(a);
            MemorySegment init = QpAttributes.allocateInit(a);
            try {
                Verbs.Calls.QUERY_QP.status(description(), handle(), attr, QpTransition.STATE, init);
            } catch (IllegalStateException e) {
                throw translate(e);
            }
            return QpState.of(QpAttributes.state(attr));
        }
    }

    private void modify(MemorySegment attr, int mask, String what) throws RdmaException {
        try {
            Verbs.Calls.MODIFY_QP.status(description() + ": " + what, handle(), attr, mask);
        } catch (IllegalStateException e) {
            throw translate(e);
        }
    }

    private void checkPort(int port) {
        int ports = context.device().ports().size();
        if (port < 1 || port > ports) {
            throw new IllegalArgumentException(context.device().name() + " has no port " + port
                    + "; its ports are 1.." + ports);
        }
    }

    @Override
    void destroy(MemorySegment raw) throws RdmaException {
        destroyer.destroy(raw);
    }

    @Override
    void released() {
        config.sendCq().removeUser(asUser);
        config.recvCq().removeUser(asUser);
        if (config.srq() != null) {
            config.srq().removeUser(asUser);
        }
        synchronized (sendRequests) {
            for (SendRequest r : sendRequests) {
                r.releaseAddressHandles();
            }
        }
    }

    /** Registered by {@link NativeResource}'s static initializer (creating it does not initialize this class). */
    static final class BridgeImpl
            implements Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> {
        @Override
        public DeviceContext borrowContext(MemorySegment ibvContext) throws RdmaException {
            return DeviceContext.borrow(ibvContext);
        }

        @Override
        public DeviceContext borrowContext(MemorySegment ibvContext, Bridge.Destroyer release) throws RdmaException {
            return DeviceContext.borrow(ibvContext, release::destroy);
        }

        @Override
        public void fillQpInitAttr(MemorySegment attr, ProtectionDomain pd, QueuePairConfig config) {
            QueuePairInit.fill(attr, pd, config);
        }

        @Override
        public QueuePair createQueuePair(ProtectionDomain pd, QueuePairConfig config, MemorySegment initAttr,
                                         Bridge.QpMaker make, Bridge.Destroyer destroyer) throws RdmaException {
            return withHolds(pd, config, asUser -> pd.ownChild(make::make, QpAttributes.QP_SIZE, destroyer::destroy,
                    n -> new QueuePair(pd, n, config, initAttr, destroyer, asUser), false));
        }
    }
}

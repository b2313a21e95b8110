package org.rdmapanama;

import org.rdmapanama.device.DeviceCapabilities;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ffi.ibv_ah_attr;
import org.rdmapanama.ffi.ibv_global_route;
import org.rdmapanama.ffi.ibv_qp;
import org.rdmapanama.ffi.ibv_qp_attr;
import org.rdmapanama.ffi.ibv_qp_cap;
import org.rdmapanama.ffi.ibv_qp_init_attr;
import org.rdmapanama.internal.Bridge;
import org.rdmapanama.internal.DataPath;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

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

    static {
        Bridge.register(new BridgeImpl());
    }

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

    private QueuePair(ProtectionDomain pd, MemorySegment qp, QueuePairConfig config, MemorySegment initAttr,
                      Bridge.Destroyer destroyer) {
        super("QueuePair " + config.type() + " " + ibv_qp.qp_num(qp.reinterpret(ibv_qp.sizeof())) + " on "
                + pd.context().device().name(), qp, ibv_qp.sizeof(), pd);
        this.pd = pd;
        this.context = pd.context();
        this.config = config;
        this.qpNumber = ibv_qp.qp_num(handle());
        MemorySegment cap = ibv_qp_init_attr.cap(initAttr);
        // The provider writes back what it granted, which may exceed the request.
        this.maxInlineData = ibv_qp_cap.max_inline_data(cap);
        this.maxSendSge = Math.max(config.maxSendSge(), 1);
        this.maxRecvSge = Math.max(config.maxRecvSge(), 1);
        this.postSendFn = context.postSendFn;
        this.postRecvFn = context.postRecvFn;
        // bad_wr is written by the provider; a global-scope alias avoids a second
        // arena acquire per post (the QP handle's acquire covers this memory).
        this.badWr = MemorySegment.ofAddress(arena().allocate(ADDRESS).address()).reinterpret(ADDRESS.byteSize());
        this.destroyer = destroyer;
        config.sendCq().addUser(this);
        if (config.recvCq() != config.sendCq()) {
            config.recvCq().addUser(this);
        }
        if (config.srq() != null) {
            config.srq().addUser(this);
        }
    }

    static QueuePair create(ProtectionDomain pd, QueuePairConfig config) throws RdmaException {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment attr = scratch.allocate(ibv_qp_init_attr.layout());
            fillInitAttr(attr, pd, config);
            MemorySegment qp = Verbs.Calls.CREATE_QP.pointer(pd.context().device().name() + ", " + config.type()
                    + ", send " + config.maxSendWr() + "x" + config.maxSendSge() + ", recv " + config.maxRecvWr()
                    + "x" + config.maxRecvSge() + ", inline " + config.maxInlineData(), pd.pd(), attr);
            return new QueuePair(pd, qp, config, attr,
                    raw -> Verbs.Calls.DESTROY_QP.status("qp " + ibv_qp.qp_num(raw.reinterpret(ibv_qp.sizeof())), raw));
        }
    }

    static void fillInitAttr(MemorySegment attr, ProtectionDomain pd, QueuePairConfig c) {
        DeviceContext ctx = pd.context();
        DeviceCapabilities caps = ctx.capabilities();
        String dev = ctx.device().name();
        if (c.type() == QueuePairType.UD && !ctx.transport().supportsUd()) {
            throw new TransportCapabilityException("UD queue pairs are not available on iWARP (" + dev
                    + "): iWARP runs over TCP and is RC only");
        }
        for (CompletionQueue cq : new CompletionQueue[] {c.sendCq(), c.recvCq()}) {
            if (cq.context() != ctx) {
                throw new IllegalArgumentException(cq + " belongs to another device than " + pd);
            }
        }
        limit("max_send_wr", c.maxSendWr(), caps.maxQpWr(), dev, "max_qp_wr");
        limit("max_send_sge", c.maxSendSge(), caps.maxSge(), dev, "max_sge");
        if (c.srq() == null) {
            limit("max_recv_wr", c.maxRecvWr(), caps.maxQpWr(), dev, "max_qp_wr");
            limit("max_recv_sge", c.maxRecvSge(), caps.maxSge(), dev, "max_sge");
        }
        int recvWr = c.srq() == null ? c.maxRecvWr() : 0; // an SRQ's receives are bounded by the SRQ
        if (c.sendCq() == c.recvCq()) {
            fits(c.sendCq(), c.maxSendWr() + recvWr, "send " + c.maxSendWr() + " + recv " + recvWr);
        } else {
            fits(c.sendCq(), c.maxSendWr(), "send " + c.maxSendWr());
            fits(c.recvCq(), recvWr, "recv " + recvWr);
        }
        attr.fill((byte) 0);
        ibv_qp_init_attr.send_cq(attr, c.sendCq().cq());
        ibv_qp_init_attr.recv_cq(attr, c.recvCq().cq());
        ibv_qp_init_attr.srq(attr, c.srq() == null ? MemorySegment.NULL : c.srq().srq());
        MemorySegment cap = ibv_qp_init_attr.cap(attr);
        ibv_qp_cap.max_send_wr(cap, c.maxSendWr());
        ibv_qp_cap.max_recv_wr(cap, c.srq() == null ? c.maxRecvWr() : 0);
        ibv_qp_cap.max_send_sge(cap, c.maxSendSge());
        ibv_qp_cap.max_recv_sge(cap, c.srq() == null ? c.maxRecvSge() : 0);
        ibv_qp_cap.max_inline_data(cap, c.maxInlineData());
        ibv_qp_init_attr.qp_type(attr, c.type().code);
        ibv_qp_init_attr.sq_sig_all(attr, c.signalAll() ? 1 : 0);
    }

    private static void limit(String what, int asked, int max, String dev, String attr) {
        if (asked > max) {
            throw new IllegalArgumentException(what + " " + asked + " exceeds " + dev + "'s " + attr + " of " + max);
        }
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
        return new SendRequest(this, arena(), chainLength, maxSge);
    }

    /** A reusable chain of up to {@code chainLength} receive WRs, each with up to {@code maxSge} SGEs. */
    public ReceiveRequest newReceiveRequest(int chainLength, int maxSge) {
        checkOpen();
        if (config.srq() != null) {
            throw new IllegalStateException(this + " receives through its shared receive queue; post there");
        }
        return new ReceiveRequest(this.context, arena(), chainLength, Math.min(maxSge, maxRecvSge), description());
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
        int rc;
        try {
            rc = (int) DataPath.POST.invokeExact(postSendFn, handle(), request.first(), badWr);
        } catch (IllegalStateException e) {
            throw translate(e);
        } catch (Throwable t) {
            throw CompletionQueue.unexpected(t);
        }
        if (rc != 0) {
            throw postFailure("ibv_post_send", rc);
        }
    }

    /** {@code ibv_post_recv} of the WRs {@code request} holds. */
    public void postRecv(ReceiveRequest request) throws RdmaException {
        if (request.context != context) {
            throw new IllegalArgumentException("this ReceiveRequest was built for another device");
        }
        int rc;
        try {
            rc = (int) DataPath.POST.invokeExact(postRecvFn, handle(), request.first(), badWr);
        } catch (IllegalStateException e) {
            throw translate(e);
        } catch (Throwable t) {
            throw CompletionQueue.unexpected(t);
        }
        if (rc != 0) {
            throw postFailure("ibv_post_recv", rc);
        }
    }

    private RdmaException postFailure(String verb, int rc) {
        int errno = Math.abs(rc);
        String hint = errno == Errno.ENOMEM ? " (the queue is full: poll completions first, or make it deeper)"
                : errno == Errno.EINVAL ? " (the QP is in the wrong state, or a WR exceeds its limits)" : "";
        return Errno.failure(verb, description(), errno, hint);
    }

    // --- state transitions (rc_pingpong's pp_connect_ctx, in steps) ---

    /** RESET → INIT on {@code port}; for RC, {@code remoteAccess} is what the peer may do here. */
    public void toInit(int port, Access... remoteAccess) throws RdmaException {
        checkPort(port);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, QpState.INIT.ordinal());
            ibv_qp_attr.pkey_index(attr, (short) 0);
            ibv_qp_attr.port_num(attr, (byte) port);
            int mask = Rdma.STATE | Rdma.PKEY_INDEX | Rdma.PORT;
            if (type() == QueuePairType.UD) {
                ibv_qp_attr.qkey(attr, DEFAULT_QKEY);
                mask |= Rdma.QKEY;
            } else {
                Set<Access> set = remoteAccess.length == 0 ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(Set.of(remoteAccess));
                set.remove(Access.LOCAL_WRITE);
                ibv_qp_attr.qp_access_flags(attr, Access.mask(set) & ~Access.LOCAL_WRITE.bit);
                mask |= Rdma.ACCESS_FLAGS;
            }
            modify(attr, mask, "RESET -> INIT");
        }
    }

    /**
     * INIT → RTR, toward {@code remote}. With {@code gidIndex >= 0} the
     * packets carry a GRH from that source GID (required on RoCE); with -1
     * they are addressed by LID only (InfiniBand within a subnet).
     */
    public void toRtr(QpAddress remote, int port, int gidIndex, int mtuBytes) throws RdmaException {
        checkPort(port);
        int mtuEnum = Integer.numberOfTrailingZeros(mtuBytes) - 7;
        if (Integer.bitCount(mtuBytes) != 1 || mtuEnum < 1 || mtuEnum > 5) {
            throw new IllegalArgumentException("path MTU must be 256, 512, 1024, 2048 or 4096, got " + mtuBytes);
        }
        if (gidIndex < 0 && context.device().port(port).linkLayer() == LinkLayer.ETHERNET) {
            throw new IllegalArgumentException(context.device().name() + " port " + port
                    + " is RoCE: a GID index is required (packets need a GRH)");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, QpState.RTR.ordinal());
            int mask = Rdma.STATE;
            if (type() == QueuePairType.RC) {
                ibv_qp_attr.path_mtu(attr, mtuEnum);
                ibv_qp_attr.dest_qp_num(attr, remote.qpn());
                ibv_qp_attr.rq_psn(attr, remote.psn());
                ibv_qp_attr.max_dest_rd_atomic(attr, (byte) Math.min(255, Math.max(1, context.capabilities().maxQpRdAtom())));
                ibv_qp_attr.min_rnr_timer(attr, (byte) 12);
                fillAddress(ibv_qp_attr.ah_attr(attr), remote, port, gidIndex);
                mask |= Rdma.AV | Rdma.PATH_MTU | Rdma.DEST_QPN | Rdma.RQ_PSN | Rdma.MAX_DEST_RD_ATOMIC
                        | Rdma.MIN_RNR_TIMER;
            }
            modify(attr, mask, "INIT -> RTR toward " + remote);
        }
    }

    /**
     * Refuses a queue pair that, with every WR outstanding, could by itself overrun its CQ. It checks
     * this QP alone: QPs sharing a CQ, and receives from an SRQ (bounded by the SRQ, shared by its QPs),
     * are the caller's sum to make. If that sum is wrong the overrun is still not silent: the CQ's next
     * poll throws {@link CompletionQueueOverrunException}.
     */
    private static void fits(CompletionQueue cq, int depth, String what) {
        if (depth > cq.size()) {
            throw new IllegalArgumentException("queue pair depth (" + what + ") exceeds the " + cq.size()
                    + " entries of " + cq + ": completions could be dropped. Make the CQ at least " + depth
                    + " entries or the queue pair shallower");
        }
    }

    static void fillAddress(MemorySegment ah, QpAddress remote, int port, int gidIndex) {
        ibv_ah_attr.dlid(ah, (short) remote.lid());
        ibv_ah_attr.sl(ah, (byte) 0);
        ibv_ah_attr.src_path_bits(ah, (byte) 0);
        ibv_ah_attr.port_num(ah, (byte) port);
        if (gidIndex >= 0) {
            ibv_ah_attr.is_global(ah, (byte) 1);
            MemorySegment grh = ibv_ah_attr.grh(ah);
            ibv_global_route.dgid(grh).copyFrom(MemorySegment.ofArray(remote.gid()));
            ibv_global_route.sgid_index(grh, (byte) gidIndex);
            ibv_global_route.hop_limit(grh, (byte) 1);
        }
    }

    /** RTR → RTS, sending from {@code psn}; RC gets perftest's timeout and retry counts. */
    public void toRts(int psn) throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, QpState.RTS.ordinal());
            ibv_qp_attr.sq_psn(attr, psn & 0xffffff);
            int mask = Rdma.STATE | Rdma.SQ_PSN;
            if (type() == QueuePairType.RC) {
                ibv_qp_attr.timeout(attr, (byte) 14);
                ibv_qp_attr.retry_cnt(attr, (byte) 7);
                ibv_qp_attr.rnr_retry(attr, (byte) 7);
                ibv_qp_attr.max_rd_atomic(attr, (byte) Math.min(255, Math.max(1, context.capabilities().maxQpInitRdAtom())));
                mask |= Rdma.TIMEOUT | Rdma.RETRY_CNT | Rdma.RNR_RETRY | Rdma.MAX_QP_RD_ATOMIC;
            }
            modify(attr, mask, "RTR -> RTS");
        }
    }

    /** Moves to ERR: outstanding WRs complete with {@link WcStatus#WR_FLUSH_ERR}. */
    public void toError() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, QpState.ERR.ordinal());
            modify(attr, Rdma.STATE, "-> ERR");
        }
    }

    /** Back to RESET, to be brought up again (after an error, say). */
    public void toReset() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            ibv_qp_attr.qp_state(attr, QpState.RESET.ordinal());
            modify(attr, Rdma.STATE, "-> RESET");
        }
    }

    /** {@code ibv_query_qp}: the current state. */
    public QpState state() throws RdmaException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(ibv_qp_attr.layout());
            MemorySegment init = a.allocate(ibv_qp_init_attr.layout());
            try {
                Verbs.Calls.QUERY_QP.status(description(), handle(), attr, Rdma.STATE, init);
            } catch (IllegalStateException e) {
                throw translate(e);
            }
            return QpState.of(ibv_qp_attr.qp_state(attr));
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
    protected void destroy(MemorySegment raw) throws RdmaException {
        destroyer.destroy(raw);
    }

    @Override
    protected void released() {
        config.sendCq().removeUser(this);
        config.recvCq().removeUser(this);
        if (config.srq() != null) {
            config.srq().removeUser(this);
        }
    }

    /** {@code enum ibv_qp_attr_mask} bits used here (checked by the ABI test via the generated constants). */
    static final class Rdma {
        static final int STATE = org.rdmapanama.ffi.Rdma.IBV_QP_STATE();
        static final int ACCESS_FLAGS = org.rdmapanama.ffi.Rdma.IBV_QP_ACCESS_FLAGS();
        static final int PKEY_INDEX = org.rdmapanama.ffi.Rdma.IBV_QP_PKEY_INDEX();
        static final int PORT = org.rdmapanama.ffi.Rdma.IBV_QP_PORT();
        static final int QKEY = org.rdmapanama.ffi.Rdma.IBV_QP_QKEY();
        static final int AV = org.rdmapanama.ffi.Rdma.IBV_QP_AV();
        static final int PATH_MTU = org.rdmapanama.ffi.Rdma.IBV_QP_PATH_MTU();
        static final int TIMEOUT = org.rdmapanama.ffi.Rdma.IBV_QP_TIMEOUT();
        static final int RETRY_CNT = org.rdmapanama.ffi.Rdma.IBV_QP_RETRY_CNT();
        static final int RNR_RETRY = org.rdmapanama.ffi.Rdma.IBV_QP_RNR_RETRY();
        static final int RQ_PSN = org.rdmapanama.ffi.Rdma.IBV_QP_RQ_PSN();
        static final int MAX_QP_RD_ATOMIC = org.rdmapanama.ffi.Rdma.IBV_QP_MAX_QP_RD_ATOMIC();
        static final int MIN_RNR_TIMER = org.rdmapanama.ffi.Rdma.IBV_QP_MIN_RNR_TIMER();
        static final int SQ_PSN = org.rdmapanama.ffi.Rdma.IBV_QP_SQ_PSN();
        static final int MAX_DEST_RD_ATOMIC = org.rdmapanama.ffi.Rdma.IBV_QP_MAX_DEST_RD_ATOMIC();
        static final int DEST_QPN = org.rdmapanama.ffi.Rdma.IBV_QP_DEST_QPN();
    }

    private static final class BridgeImpl
            implements Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> {
        @Override
        public MemorySegment pdHandle(ProtectionDomain pd) {
            return pd.pd();
        }

        @Override
        public DeviceContext borrowContext(MemorySegment ibvContext) throws RdmaException {
            return DeviceContext.borrow(ibvContext);
        }

        @Override
        public void fillQpInitAttr(MemorySegment attr, ProtectionDomain pd, QueuePairConfig config) {
            fillInitAttr(attr, pd, config);
        }

        @Override
        public QueuePair adoptQueuePair(ProtectionDomain pd, MemorySegment qp, QueuePairConfig config,
                                        MemorySegment initAttr, Bridge.Destroyer destroyer) {
            return new QueuePair(pd, qp, config, initAttr, destroyer);
        }
    }
}

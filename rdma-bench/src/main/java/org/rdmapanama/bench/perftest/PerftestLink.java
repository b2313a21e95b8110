package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.perftest.PerftestOptions.Verb;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.device.Selection;
import org.rdmapanama.device.Transport;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.error.TransportCapabilityException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionBatch;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.ConfinedPoller;
import org.rdmapanama.verbs.ConfinedPoster;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.Opcode;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QpAddress;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;
import org.rdmapanama.verbs.ReceiveRequest;
import org.rdmapanama.verbs.SendRequest;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A perftest run's link to its peer: the RC QP, its CQ, the memory region and
 * the pre-built work requests, set up as native perftest 4.5 does, so that
 * either end may be perftest ({@link PerftestExchange}): over TCP with our own
 * QP transitions (no {@code -R}: InfiniBand and RoCE), or with a first rdma_cm
 * connection for the exchange and a second for the test ({@code -R}, the only
 * way for iWARP). The region is {@code [0,S)} source, {@code [S,2S)} where the
 * peer writes or reads (S at least perftest's cycle buffer), and the
 * {@link PerftestControl} area, which only a Java peer uses. The exchange stays
 * open until the end: perftest's last handshakes travel on it, and a TCP one
 * closing is how a side learns that its peer died ({@link PerftestPeerWatch}).
 * <p>
 * {@link #connect} fills the fields in order; {@link #close} undoes whatever
 * exists, so a failed set-up is closed like a finished run. One thread.
 */
final class PerftestLink implements AutoCloseable {
    // wr_id tags; data WRs carry their QP and index (PerftestCompletions.dataId, below 2^60), so that a
    // completion tells how many of its QP's are done.
    static final long RECV_ID = 1L << 62;
    static final long CTRL_ID = 1L << 61;
    static final long CREDIT_ID = 1L << 60;

    static final Duration SETUP_TIMEOUT = Duration.ofSeconds(120);

    final PerftestOptions o;
    final boolean server;
    /** The end of a loopback connection for the local warm-up ({@link PerftestLoopback}), not the test's link. */
    private final boolean loopback;
    /** S: the largest message, rounded up to 64 (no -R: at least the agreed cycle buffer). */
    int slot;
    private final PrintStream out;
    private final PrintStream err;

    private DeviceContext ownedContext;
    private RdmaListener listener;
    private RdmaConnection connection;
    /** perftest's TCP exchange (no -R), kept open: the end's handshakes, and its closing tells that the peer is gone. */
    PerftestExchange exchange;
    /** The peer is native perftest (no -R): no control area, no warm-up vote, perftest's handshakes. */
    boolean nativePeer;
    /** Our QP address for each handshake (no -R). */
    PerftestKeys myKeys;
    int mtuBytes;
    DeviceContext ctx;
    Selection selection;
    QueuePair qp;
    CompletionQueue cq;
    MemoryRegion mr;
    MemorySegment mem;
    SendRequest data;
    SendRequest ctrl;
    SendRequest credit;
    ReceiveRequest recv;
    /** The data path, bound to the thread that connected (which runs the test): see {@link #connect}. */
    ConfinedPoller poller;
    ConfinedPoster poster;
    CompletionBatch batch; // the CQ's own memory: nothing to close
    /**
     * The test's QPs ({@code -q}, perftest's num_of_qps), index 0 being {@link #qp}, which alone carries the
     * control area and the latency tests. Each has its data request, and the region as its PD knows it (with
     * {@code -R} every connection has its own PD, where the region is registered again). The bandwidth loop
     * posts to each in turn, as perftest's does.
     */
    QueuePair[] qps;
    ConfinedPoster[] posters;
    SendRequest[] datas;
    MemoryRegion[] mrs;
    /** Our and the peer's QP addresses, as the handshakes carried them: where each of our QPs writes or reads. */
    PerftestKeys[] keys;
    PerftestKeys[] peerKeys;
    /** One per CQ: one without -R, where the QPs share it; one per connection with -R. */
    ConfinedPoller[] pollers;
    CompletionBatch[] batches;
    /** With -R, the test's connections after the first, one per further QP, and the region registered in their PDs. */
    private final List<RdmaConnection> moreConnections = new ArrayList<>();
    private final List<MemoryRegion> aliases = new ArrayList<>();
    PerftestWire mine;
    PerftestWire peer;
    int outReads;
    int gidIndex;
    /** Receives posted during set-up, and how many the whole run takes (open-ended with -D or a warm-up). */
    long postedRecvs;
    long totalRecvs;

    PerftestLink(PerftestOptions o, PrintStream out, PrintStream err) {
        this(o, o.isServer(), false, out, err);
    }

    private PerftestLink(PerftestOptions o, boolean server, boolean loopback, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.server = server;
        this.loopback = loopback;
        this.slot = (Math.max(o.maxSize(), 8) + 63) & ~63;
    }

    /**
     * The warm-up's end of a loopback connection ({@link PerftestLoopback}): the test's loops run on it
     * as on a link to a native peer, in the role {@code server}, with its receives open-ended. It watches
     * the real peer's {@code exchange} (and, with -R, its own connection), as the run's watch will, so that
     * the JIT sees the same branches; it owns only its work requests and data path ({@link #closeLoopbackEnd}).
     */
    static PerftestLink loopbackEnd(PerftestOptions o, boolean server, int slot, RdmaConnection end,
                                    PerftestExchange exchange, boolean watchConnection) throws RdmaException {
        PerftestLink l = new PerftestLink(o, server, true, null, null);
        l.slot = slot;
        l.nativePeer = true;
        l.exchange = exchange;
        l.connection = watchConnection ? end : null;
        l.ctx = end.context();
        l.selection = l.ctx.selection();
        l.qp = end.queuePair();
        l.cq = end.completionQueue();
        boolean ok = false;
        try {
            l.allocate(end.protectionDomain());
            // -q requests, all on the one loopback QP (sized for them: PerftestLoopback): the loop runs over as
            // many QPs as the real run's, so that the JIT compiles the run's shape, not a one-QP special case.
            l.qps = new QueuePair[l.o.numQps];
            java.util.Arrays.fill(l.qps, l.qp);
            l.moreRequests();
            l.bindDataPath(); // on the warm-up's thread, which runs its loops and closes it
            ok = true;
            return l;
        } finally {
            if (!ok) {
                l.closeLoopbackEnd();
            }
        }
    }

    /** Closes what a {@link #loopbackEnd} owns (the exchange and the connection are not its own). */
    void closeLoopbackEnd() {
        closeMore();
        for (AutoCloseable c : new AutoCloseable[] {poster, poller, data, ctrl, credit, recv, mr}) {
            closeQuietly(c);
        }
    }

    /** The data requests of QPs 1..q-1, with the region as each one's PD knows it ({@link #mrs} is filled). */
    private void moreRequests() throws RdmaException {
        int n = qps.length;
        datas = new SendRequest[n];
        datas[0] = data;
        if (mrs == null) {
            mrs = new MemoryRegion[n];
            java.util.Arrays.fill(mrs, mr);
        }
        for (int i = 1; i < n; i++) {
            datas[i] = qps[i].newSendRequest(1, 1);
        }
    }

    /** What {@link #moreRequests} and {@link #bindDataPath} made for QPs after the first; closed first. */
    private void closeMore() {
        if (posters != null) {
            for (int i = 1; i < posters.length; i++) {
                if (posters[i] != poster) {
                    closeQuietly(posters[i]);
                }
            }
        }
        if (pollers != null) {
            for (int i = 1; i < pollers.length; i++) {
                closeQuietly(pollers[i]);
            }
        }
        if (datas != null) {
            for (int i = 1; i < datas.length; i++) {
                closeQuietly(datas[i]);
            }
        }
        aliases.forEach(PerftestLink::closeQuietly);
    }

    /** How many QPs the test runs: {@code -q}. */
    int qpCount() {
        return qps.length;
    }

    void connect() throws IOException, InterruptedException {
        RdmaConfig config = RdmaConfig.load().withTransport(o.transport).withDevice(o.device).withPort(o.ibPort);
        if (o.gidIndex != null) {
            config = config.withGid(Integer.toString(o.gidIndex));
        }
        if (o.rdmaCm) {
            connectCm(config);
        } else {
            connectOob(config);
        }
        bindDataPath();
    }

    /**
     * One thread owns a run, so its posts and polls go through objects bound
     * to it: the QP and CQ cannot close under them, and no call pays the
     * shared arena's atomic acquire. Closing the link releases them first.
     */
    private void bindDataPath() {
        batch = cq.newBatch(16);
        poller = cq.confinedPoller();
        poster = qp.confinedPoster();
        int n = qps.length;
        posters = new ConfinedPoster[n];
        posters[0] = poster;
        for (int i = 1; i < n; i++) {
            posters[i] = qps[i] == qp ? poster : qps[i].confinedPoster();
        }
        int cqs = 1 + moreConnections.size();
        pollers = new ConfinedPoller[cqs];
        batches = new CompletionBatch[cqs];
        pollers[0] = poller;
        batches[0] = batch;
        for (int i = 1; i < cqs; i++) {
            CompletionQueue c = moreConnections.get(i - 1).completionQueue();
            batches[i] = c.newBatch(16);
            pollers[i] = c.confinedPoller();
        }
    }

    /** Watches for the peer going away during the run; after {@link #connect}. */
    PerftestPeerWatch peerWatch() {
        return new PerftestPeerWatch(exchange, connection, qp);
    }

    private void checkDevice(DeviceContext c) {
        if (o.test.verb == Verb.ATOMIC && c.capabilities().atomicCap() == AtomicCapability.NONE) {
            throw new TransportCapabilityException("atomic_lat refused: " + c.device().name() + " ("
                    + c.transport().displayName() + ") reports atomic_cap NONE");
        }
    }

    private Access[] remoteAccess() {
        List<Access> access = new ArrayList<>(List.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        if (ctx.capabilities().atomicCap() != AtomicCapability.NONE) {
            access.add(Access.REMOTE_ATOMIC);
        }
        return access.toArray(Access[]::new);
    }

    private void allocate(ProtectionDomain pd) throws RdmaException {
        mr = pd.allocate(2L * slot + PerftestControl.SIZE, remoteAccess());
        mem = mr.segment();
        data = qp.newSendRequest(1, 1);
        ctrl = qp.newSendRequest(1, 1);
        credit = qp.newSendRequest(1, 1);
        ctrl.opcode(0, Opcode.RDMA_WRITE).wrId(CTRL_ID).signaled(0, true);
        credit.opcode(0, Opcode.RDMA_WRITE).wrId(CREDIT_ID).signaled(0, true)
                .sge(mr, 2L * slot + PerftestControl.OUT_CREDIT, 8);
        if (o.test.verb == Verb.SEND) {
            recv = qp.newReceiveRequest(1, 1);
            recv.wrId(RECV_ID).sge(mr, slot, slot);
            int sizes = o.sizes().length;
            // The warm-up runs as many rounds as the JIT needs: then the count is open-ended, as with -D.
            totalRecvs = o.duration != null || warmup() || loopback ? Long.MAX_VALUE : (long) o.iters * sizes;
            long first = Math.min(o.rxDepth(), totalRecvs);
            for (long i = 0; i < first; i++) {
                qp.postRecv(recv);
            }
            postedRecvs = first;
        }
    }

    /**
     * Unreported rounds with the peer before the reported run: an rdma-bench peer takes part and votes
     * (PerftestControl.agree). Native perftest counts every message of its run and has no unreported
     * rounds: against it the warm-up runs earlier, in this process only, on a loopback connection
     * ({@link #warmUpLocally}).
     */
    boolean warmup() {
        return o.warmup() && !nativePeer;
    }

    /**
     * Against native perftest: the local warm-up ({@link PerftestLoopback}), right after the
     * version, system-data and MTU blocks and before our QP exists. perftest then waits for our
     * next block with no timeout (a blocking read() on the TCP socket, a busy ibv_poll_cq with -R),
     * and nothing reaches it meanwhile. A warm-up that fails is reported and the run goes on cold.
     */
    private void warmUpLocally(DeviceContext device) {
        if (nativePeer && o.warmup() && PerftestLoopback.role(o.test, server) != null) {
            PerftestLoopback.warmUp(o, server, slot, device, exchange, err);
        }
    }

    private PerftestWire describe(int lid, byte[] gid) {
        int psn = new SecureRandom().nextInt(1 << 24);
        return new PerftestWire(o.test.ordinal(), PerftestWire.flagsOf(o), o.numQps, lid, o.maxSize(),
                o.duration != null ? o.duration : o.iters, qp.qpNumber(), psn, mr.address() + slot, mr.rkey(),
                slot + PerftestControl.SIZE, gid);
    }

    private PerftestWire decode(byte[] message) {
        return PerftestWire.decode(message, mine, slot + PerftestControl.SIZE);
    }

    private void connectOob(RdmaConfig config) throws IOException {
        // Closed here when anything before the accept fails (the accept closes it otherwise).
        try (ServerSocketChannel listening = server ? PerftestTcpExchange.listen(o.port) : null) {
            openAndConnectOob(config, listening);
        }
    }

    private void openAndConnectOob(RdmaConfig config, ServerSocketChannel listening) throws IOException {
        ownedContext = DeviceContext.open(config);
        ctx = ownedContext;
        selection = ctx.selection();
        if (ctx.transport().connectsOnlyThroughRdmaCm()) {
            throw new IllegalArgumentException(ctx.device().name() + " is " + ctx.transport().displayName() + ", which connects only through "
                    + "rdma_cm: add -R");
        }
        checkDevice(ctx);
        Port port = selection.port();
        gidIndex = selection.gidIndex();
        outReads = Math.clamp(Math.min(ctx.capabilities().maxQpRdAtom(), ctx.capabilities().maxQpInitRdAtom()), 1, 16);
        // perftest's order: versions, system data and MTU before any resource, since they size the buffer.
        exchange = server ? PerftestTcpExchange.accept(listening, o.port, SETUP_TIMEOUT, out)
                : PerftestTcpExchange.connect(o.server, o.port, SETUP_TIMEOUT);
        agree(port.activeMtu());
        warmUpLocally(ctx);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        // perftest's: one CQ for all the QPs, deep enough for each one's window (receives: send_bw, one QP only).
        cq = ctx.createCompletionQueue(o.numQps * o.txDepth + o.rxDepth() + 16);
        qps = new QueuePair[o.numQps];
        for (int i = 0; i < qps.length; i++) {
            qps[i] = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(o.txDepth + 2, o.rxDepth())
                    .withInline(o.inline()).withSignalAll(false));
            qps[i].toInit(o.ibPort, remoteAccess());
        }
        qp = qps[0];
        allocate(pd);
        moreRequests();
        byte[] gid = gidIndex >= 0 ? selection.gid().raw() : null;
        mine = describe(port.lid(), gid != null ? gid : new byte[16]);
        handshakes(gid, true);
    }

    /** perftest's version, system-data and MTU blocks; the buffer's size depends on them. */
    private void agree(int activeMtuBytes) throws IOException {
        PerftestExchange.Hello hello = exchange.hello(PerftestWire.VERSION, SETUP_TIMEOUT);
        nativePeer = !hello.java();
        if (hello.java() && hello.protocol() != PerftestWire.VERSION) {
            throw new IllegalArgumentException("the peer is rdma-bench with perftest protocol " + hello.protocol()
                    + ", this side " + PerftestWire.VERSION + ": run the same rdma-bench on both sides");
        }
        int[] sys = exchange.sysData(PerftestExchange.CYCLE_BUFFER, PerftestExchange.CACHE_LINE, SETUP_TIMEOUT);
        // The peer writes and reads anywhere in one cycle buffer (perftest's bandwidth loops step through it).
        slot = Math.max(slot, sys[0]);
        mtuBytes = Port.mtuBytes(exchange.mtu(Integer.numberOfTrailingZeros(activeMtuBytes) - 7, SETUP_TIMEOUT));
    }

    /**
     * The test's handshakes before its run, after our QP and buffer exist: the first gives the
     * peer's QP address (and, without -R, lets us connect our QP); the last says that both QPs
     * are at RTS. A Java peer also checks our parameters first.
     */
    private void handshakes(byte[] gid, boolean connectQp) throws IOException {
        // perftest's send_bw on iWARP advertises its receive-credit word instead of its buffer (a Send needs no
        // address); the peer writes its count of our Sends there, and we write ours to the peer's.
        long vaddr = nativeCredits() ? mine.address() + slot + PerftestControl.CTRL_CREDIT : mine.address();
        myKeys = new PerftestKeys(mine.lid(), outReads, mine.qpn(), mine.psn(), mine.rkey(), vaddr, gid, 0);
        int n = qps.length;
        keys = new PerftestKeys[n];
        keys[0] = myKeys;
        SecureRandom random = new SecureRandom();
        for (int i = 1; i < n; i++) {
            keys[i] = new PerftestKeys(mine.lid(), outReads, qps[i].qpNumber(), random.nextInt(1 << 24),
                    mrs[i].rkey(), vaddr, gid, 0);
        }
        if (!nativePeer) {
            // Two Java ends also check each other's test, sizes, count and mode: a mismatch is an error, not a hang.
            decode(exchange.xchg(mine.encode(), SETUP_TIMEOUT));
        }
        // perftest's order: one handshake per QP, the QPs connected, one more per QP, then single ones.
        peerKeys = new PerftestKeys[n];
        for (int i = 0; i < n; i++) {
            peerKeys[i] = exchange.handshake(keys[i], SETUP_TIMEOUT);
        }
        PerftestKeys pk = peerKeys[0];
        if (connectQp && !PerftestKeys.sameGidType(gid, pk.gid())) {
            throw new IllegalArgumentException("Found Incompatibility issue with GID types (one side IPv4-mapped, "
                    + "the other not). Please Try to use a different IP version.");
        }
        peer = new PerftestWire(mine.test(), mine.flags(), mine.qps(), pk.lid(), mine.size(), mine.iters(), pk.qpn(), pk.psn(),
                pk.vaddr(), pk.rkey(), slot + PerftestControl.SIZE, pk.gid() != null ? pk.gid() : new byte[16]);
        if (connectQp) {
            for (int i = 0; i < n; i++) {
                connectQp(i, mtuBytes);
            }
        }
        for (int h = 1; h < PerftestExchange.handshakesBeforeRun(o.test); h++) {
            for (int i = 0; i < (h == 1 ? n : 1); i++) {
                exchange.handshake(keys[i], SETUP_TIMEOUT);
            }
        }
    }

    private void connectQp(int i, int mtu) throws RdmaException {
        PerftestKeys pk = peerKeys[i];
        byte[] pgid = pk.gid() != null ? pk.gid() : new byte[16];
        QpAddress remote = new QpAddress(pk.lid(), pk.qpn(), pk.psn(), pgid);
        qps[i].toRtr(remote, o.ibPort, remote.hasGid() ? gidIndex : -1, mtu);
        qps[i].toRts(keys[i].psn());
    }

    /**
     * perftest's {@code -R}: a first rdma_cm connection carries the exchange
     * ({@link PerftestCmExchange}), then a second one, to the same port, is the
     * test's, with a handshake on either side of its set-up. perftest's server
     * listens again for it only after the first of those, so a client retries
     * as perftest's does (10 times, 100 ms apart).
     */
    private void connectCm(RdmaConfig config) throws IOException, InterruptedException {
        List<RdmaDevice> devices = RdmaDevices.require();
        int rd = 255; // rdma_conn_param's fields are 8-bit
        for (RdmaDevice d : devices) {
            rd = Math.min(rd, Math.min(d.capabilities().maxQpRdAtom(), d.capabilities().maxQpInitRdAtom()));
        }
        outReads = Math.max(1, rd);
        ConnectionOptions opts = new ConnectionOptions(o.txDepth + 2, o.rxDepth(), 1, 1, o.inline(),
                o.txDepth + o.rxDepth() + 16, outReads, 7, 7, false); // perftest's selective signaling
        // A device (or transport) asked for picks the address; otherwise rdma_cm picks by the peer's address.
        boolean pinned = config.device().isPresent() || config.transport().isPresent();
        InetAddress local = pinned ? Selection.select(config, devices).ipAddress() : null;
        PerftestKeys none = new PerftestKeys(0, 0, 0, 0, 0, 0, null, 0); // perftest's are still zero then
        if (server) {
            InetSocketAddress at = local != null ? new InetSocketAddress(local, o.port) : new InetSocketAddress(o.port);
            listener = RdmaListener.bind(at, Math.max(2, o.numQps), opts); // perftest's client connects its QPs at once
            PerftestHeader.waiting(out);
            RdmaConnection comm = accepted(at);
            exchange = commExchange(comm);
            comm.accept(new byte[0], SETUP_TIMEOUT);
            agree(comm);
            warmUpLocally(comm.context());
            exchange.handshake(none, SETUP_TIMEOUT);
            connection = accepted(at);
            setUpOnConnection();
            connection.accept(new byte[0], SETUP_TIMEOUT);
            for (int i = 1; i < o.numQps; i++) {
                // In the order the requests come, as perftest's server numbers them (its client connects in QP order).
                RdmaConnection c = accepted(at);
                moreConnections.add(c);
                setUpMore(c);
                c.accept(new byte[0], SETUP_TIMEOUT);
            }
            moreQps();
        } else {
            InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(o.server), o.port);
            InetSocketAddress from = local == null ? null : new InetSocketAddress(local, 0);
            RdmaConnection comm = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            exchange = commExchange(comm);
            comm.connect(new byte[0], SETUP_TIMEOUT);
            agree(comm);
            warmUpLocally(comm.context());
            exchange.handshake(none, SETUP_TIMEOUT);
            connection = connectData(to, from, opts, null);
            for (int i = 1; i < o.numQps; i++) {
                // One at a time, so that the server sees them in our QP order (the handshakes carry them in it).
                moreConnections.add(connectData(to, from, opts, this::setUpMore));
            }
            moreQps();
        }
        exchange.handshake(none, SETUP_TIMEOUT);
        handshakes(selection.gid() != null ? selection.gid().raw() : null, false);
    }

    private void agree(RdmaConnection comm) throws IOException {
        agree(comm.context().selection().port().activeMtu());
    }

    /**
     * send_bw against native perftest on a transport without receiver-not-ready retry (iWARP): perftest's
     * own receive credits, a 32-bit count of the Sends received in this size, RDMA-written by the receiver
     * to the word the sender advertised in the QP-address handshake, which the sender keeps its window
     * under. Between two Java ends the control area's 64-bit credit does the same.
     */
    boolean nativeCredits() {
        // The warm-up's sending loop end too (see PerftestLoopback's partner); its receiving one keeps ours.
        return nativePeer && (!loopback || !server) && o.test == PerftestOptions.Test.SEND_BW
                && !ctx.transport().retriesReceiverNotReady();
    }

    private RdmaConnection accepted(InetSocketAddress at) throws RdmaException, InterruptedException {
        RdmaConnection c = listener.accept(SETUP_TIMEOUT);
        if (c == null) {
            throw new RdmaException("no client connected through rdma_cm to " + at + " within "
                    + SETUP_TIMEOUT.toSeconds() + " s");
        }
        return c;
    }

    private PerftestExchange commExchange(RdmaConnection comm) throws RdmaException {
        try {
            checkDevice(comm.context()); // refused before anything is sent, as without -R
            return new PerftestCmExchange(comm, !server, Math.max(0, comm.context().selection().gidIndex()));
        } catch (RdmaException | RuntimeException e) {
            closeQuietly(comm);
            throw e;
        }
    }

    /** A further QP's connection ({@code -q}), set up before it connects: {@code more} undoes itself on failure. */
    private interface MoreSetUp {
        void setUp(RdmaConnection c) throws RdmaException;
    }

    /** The test's connection: the first (more == null) or a further QP's. */
    private RdmaConnection connectData(InetSocketAddress to, InetSocketAddress from, ConnectionOptions opts,
                                       MoreSetUp more) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            RdmaConnection c = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            try {
                if (more == null) {
                    connection = c;
                    setUpOnConnection(); // receives are posted before the peer can send
                } else {
                    more.setUp(c);
                }
            } catch (RdmaException | RuntimeException e) {
                closeQuietly(c);
                throw e;
            }
            try {
                c.connect(new byte[0], SETUP_TIMEOUT);
                return c;
            } catch (RdmaException e) {
                AutoCloseable[] made = more == null ? new AutoCloseable[] {data, ctrl, credit, recv, c}
                        : new AutoCloseable[] {aliases.removeLast(), c};
                for (AutoCloseable x : made) {
                    closeQuietly(x);
                }
                connection = null;
                if (attempt == 10) {
                    throw new RdmaException("the test's rdma_cm connection to " + to + " failed 10 times: "
                            + e.getMessage(), e);
                }
                Thread.sleep(100);
            }
        }
    }

    private void setUpOnConnection() throws RdmaException {
        ctx = connection.context();
        checkDevice(ctx);
        selection = ctx.selection();
        gidIndex = Math.max(0, selection.gidIndex());
        qp = connection.queuePair();
        cq = connection.completionQueue();
        allocate(connection.protectionDomain());
        byte[] gid = selection.gid() != null ? selection.gid().raw() : new byte[16];
        mine = describe(selection.port().lid(), gid);
    }

    /** A further QP's connection: the region registered again in its PD (its requests come in {@link #moreQps}). */
    private void setUpMore(RdmaConnection c) throws RdmaException {
        checkDevice(c.context());
        if (!c.context().device().name().equals(ctx.device().name())) {
            throw new RdmaException("rdma_cm put a further QP's connection on " + c.context().device().name()
                    + ", the first on " + ctx.device().name());
        }
        aliases.add(c.protectionDomain().register(mem, remoteAccess()));
    }

    /** With -R, once every connection is up: the QPs, regions and requests in QP order. */
    private void moreQps() throws RdmaException {
        int n = 1 + moreConnections.size();
        qps = new QueuePair[n];
        mrs = new MemoryRegion[n];
        qps[0] = qp;
        mrs[0] = mr;
        for (int i = 1; i < n; i++) {
            qps[i] = moreConnections.get(i - 1).queuePair();
            mrs[i] = aliases.get(i - 1);
        }
        moreRequests();
    }

    @Override
    public void close() {
        closeMore();
        for (AutoCloseable c : new AutoCloseable[] {poster, poller, data, ctrl, credit, recv}) {
            closeQuietly(c);
        }
        // One deadline for all: a client gone without disconnecting costs a server 10 s, not 10 s a QP.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (RdmaConnection c : moreConnections) {
            endConnection(c, deadline);
        }
        endConnection(connection, deadline);
        closeQuietly(exchange);
        closeQuietly(listener);
        closeQuietly(ownedContext);
    }

    /** The client disconnects; the server waits (a while) for that, so that neither flushes the other's last WRs. */
    private void endConnection(RdmaConnection c, long deadline) {
        if (c == null) {
            return;
        }
        try {
            if (server) {
                c.awaitDisconnect(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            } else {
                c.disconnect();
            }
        } catch (RdmaException e) {
            // closing anyway
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeQuietly(c);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // teardown after a failure: the first error is what the user sees
            }
        }
    }
}

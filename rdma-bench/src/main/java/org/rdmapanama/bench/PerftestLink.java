package org.rdmapanama.bench;

import org.rdmapanama.Access;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.CompletionBatch;
import org.rdmapanama.CompletionQueue;
import org.rdmapanama.ConfinedPoller;
import org.rdmapanama.ConfinedPoster;
import org.rdmapanama.DeviceContext;
import org.rdmapanama.MemoryRegion;
import org.rdmapanama.Opcode;
import org.rdmapanama.device.Port;
import org.rdmapanama.ProtectionDomain;
import org.rdmapanama.QpAddress;
import org.rdmapanama.QueuePair;
import org.rdmapanama.QueuePairConfig;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.RdmaDevice;
import org.rdmapanama.device.RdmaDevices;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.ReceiveRequest;
import org.rdmapanama.device.Selection;
import org.rdmapanama.SendRequest;
import org.rdmapanama.device.Transport;
import org.rdmapanama.TransportCapabilityException;
import org.rdmapanama.cm.ConnectionOptions;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.cm.RdmaListener;
import org.rdmapanama.bench.PerftestOptions.Verb;

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
    // wr_id tags; data WRs carry their index (< 2^60) so that a completion tells how many are done.
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
        for (AutoCloseable c : new AutoCloseable[] {poster, poller, data, ctrl, credit, recv, mr}) {
            closeQuietly(c);
        }
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
        return new PerftestWire(o.test.ordinal(), PerftestWire.flagsOf(o), lid, o.maxSize(),
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
        cq = ctx.createCompletionQueue(o.txDepth + o.rxDepth() + 16);
        qp = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(o.txDepth + 2, o.rxDepth())
                .withInline(o.inline()).withSignalAll(false));
        qp.toInit(o.ibPort, remoteAccess());
        allocate(pd);
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
        if (!nativePeer) {
            // Two Java ends also check each other's test, sizes, count and mode: a mismatch is an error, not a hang.
            decode(exchange.xchg(mine.encode(), SETUP_TIMEOUT));
        }
        PerftestKeys pk = exchange.handshake(myKeys, SETUP_TIMEOUT);
        if (connectQp && !PerftestKeys.sameGidType(gid, pk.gid())) {
            throw new IllegalArgumentException("Found Incompatibility issue with GID types (one side IPv4-mapped, "
                    + "the other not). Please Try to use a different IP version.");
        }
        peer = new PerftestWire(mine.test(), mine.flags(), pk.lid(), mine.size(), mine.iters(), pk.qpn(), pk.psn(),
                pk.vaddr(), pk.rkey(), slot + PerftestControl.SIZE, pk.gid() != null ? pk.gid() : new byte[16]);
        if (connectQp) {
            connectQp(mtuBytes);
        }
        for (int i = 1; i < PerftestExchange.handshakesBeforeRun(o.test); i++) {
            exchange.handshake(myKeys, SETUP_TIMEOUT);
        }
    }

    private void connectQp(int mtu) throws RdmaException {
        QpAddress remote = new QpAddress(peer.lid(), peer.qpn(), peer.psn(), peer.gid());
        qp.toRtr(remote, o.ibPort, remote.hasGid() ? gidIndex : -1, mtu);
        qp.toRts(mine.psn());
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
            listener = RdmaListener.bind(at, 2, opts);
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
        } else {
            InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(o.server), o.port);
            InetSocketAddress from = local == null ? null : new InetSocketAddress(local, 0);
            RdmaConnection comm = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            exchange = commExchange(comm);
            comm.connect(new byte[0], SETUP_TIMEOUT);
            agree(comm);
            warmUpLocally(comm.context());
            exchange.handshake(none, SETUP_TIMEOUT);
            connectData(to, from, opts);
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

    private void connectData(InetSocketAddress to, InetSocketAddress from, ConnectionOptions opts)
            throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            connection = RdmaConnection.resolve(to, from, opts, SETUP_TIMEOUT);
            setUpOnConnection(); // receives are posted before the peer can send
            try {
                connection.connect(new byte[0], SETUP_TIMEOUT);
                return;
            } catch (RdmaException e) {
                for (AutoCloseable c : new AutoCloseable[] {data, ctrl, credit, recv, connection}) {
                    closeQuietly(c);
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

    @Override
    public void close() {
        for (AutoCloseable c : new AutoCloseable[] {poster, poller, data, ctrl, credit, recv}) {
            closeQuietly(c);
        }
        if (connection != null) {
            try {
                if (server) {
                    connection.awaitDisconnect(Duration.ofSeconds(10));
                } else {
                    connection.disconnect();
                }
            } catch (RdmaException e) {
                // closing anyway
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        closeQuietly(connection);
        closeQuietly(exchange);
        closeQuietly(listener);
        closeQuietly(ownedContext);
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

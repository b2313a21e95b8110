package org.rdmapanama.bench.perftest;

import org.rdmapanama.bench.UsageException;
import org.rdmapanama.bench.perftest.PerftestOptions.Verb;
import org.rdmapanama.cm.RdmaConnection;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.RdmaConfig;
import org.rdmapanama.device.Selection;
import org.rdmapanama.error.RdmaException;
import org.rdmapanama.verbs.Access;
import org.rdmapanama.verbs.CompletionQueue;
import org.rdmapanama.verbs.DeviceContext;
import org.rdmapanama.verbs.MemoryRegion;
import org.rdmapanama.verbs.ProtectionDomain;
import org.rdmapanama.verbs.QueuePair;
import org.rdmapanama.verbs.QueuePairConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.channels.ServerSocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;

/**
 * A perftest run's link to its peer: the RC QPs ({@link PerftestLane}s), their CQs, the memory region and
 * the pre-built work requests, set up as native perftest 4.5 does, so that either end may be perftest
 * ({@link PerftestExchange}): over TCP with our own QP transitions (no {@code -R}: InfiniBand and RoCE), or
 * with a first rdma_cm connection for the exchange and a second for the test ({@code -R}, the only way for
 * iWARP: {@link PerftestCmSetup}). The region is {@code [0,S)} source, {@code [S,2S)} where the peer writes
 * or reads (S at least perftest's cycle buffer), and the {@link PerftestControl} area, which only a Java
 * peer uses. The exchange stays open until the end: perftest's last handshakes travel on it, and a TCP one
 * closing is how a side learns that its peer died ({@link PerftestPeerWatch}).
 * <p>
 * {@link #connect} builds it in order; {@link #close} undoes whatever exists, so a failed set-up is closed
 * like a finished run. One thread.
 */
final class PerftestLink implements AutoCloseable {
    // wr_id tags; data WRs carry their QP and index (PerftestCompletions.dataId, below 2^60), so that a
    // completion tells how many of its QP's are done.
    static final long RECV_ID = 1L << 62;
    static final long CTRL_ID = 1L << 61;
    static final long CREDIT_ID = 1L << 60;

    static final Duration SETUP_TIMEOUT = Duration.ofSeconds(120);

    private final PerftestOptions o;
    private final boolean server;
    /** The end of a loopback connection for the local warm-up ({@link PerftestLoopback}), not the test's link. */
    private final boolean loopback;
    /** S: the largest message, rounded up to 64 (no -R: at least the agreed cycle buffer). */
    private int slot;
    private final PrintStream out;
    private final PrintStream err;

    private DeviceContext ownedContext;
    private PerftestCmSetup cm;
    /** The connection whose rdma_cm events tell that the peer left (-R), or null. */
    private RdmaConnection watched;
    /** perftest's exchange, kept open: the end's handshakes, and (TCP) its closing tells that the peer is gone. */
    private PerftestExchange exchange;
    /** The peer is native perftest: no control area, no warm-up vote, perftest's handshakes. */
    private boolean nativePeer;
    private int mtuBytes;
    private int outReads;
    private int gidIndex;
    private DeviceContext ctx;
    private Selection selection;
    /** Lane 0's CQ, and the region with the requests lane 0 carries besides its data. */
    private CompletionQueue cq;
    private PerftestBuffer buffer;
    private PerftestLane[] lanes;
    /** The data path, bound to the thread that connected (which runs the test): see {@link #bindDataPath}. */
    private PerftestPath.Cq[] cqs;

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
     * The warm-up's end of a loopback connection ({@link PerftestLoopback}): the test's loops run on it as on a
     * link to a native peer, in the role {@code server}, with its receives open-ended, aimed at the other end
     * by {@link #aimAt}. It watches the real peer's {@code exchange} (and, with -R, its own connection), as the
     * run's watch will, so that the JIT sees the same branches; it owns only its work requests and data path.
     */
    static PerftestLink loopbackEnd(PerftestOptions o, boolean server, int slot, RdmaConnection end,
                                    PerftestExchange exchange, boolean watchConnection) throws RdmaException {
        PerftestLink l = new PerftestLink(o, server, true, null, null);
        l.slot = slot;
        l.nativePeer = true;
        l.exchange = exchange;
        l.watched = watchConnection ? end : null;
        l.ctx = end.context();
        l.selection = l.ctx.selection();
        l.cq = end.completionQueue();
        boolean ok = false;
        try {
            l.allocate(end.protectionDomain(), end.queuePair());
            // -q lanes, all on the one loopback QP (sized for them: PerftestLoopback): the loop runs over as many
            // QPs as the real run's, so that the JIT compiles the run's shape, not a one-QP special case.
            QueuePair[] qps = new QueuePair[o.numQps];
            java.util.Arrays.fill(qps, end.queuePair());
            l.makeLanes(qps, null);
            l.bindDataPath(List.of()); // on the warm-up's thread, which runs its loops and closes it
            ok = true;
            return l;
        } finally {
            if (!ok) {
                l.closeLoopbackEnd();
            }
        }
    }

    /** A loopback end's peer: every lane writes and reads our own [S, 2S), registered with {@code rkey} on the other end. */
    void aimAt(int rkey) {
        PerftestKeys target = new PerftestKeys(0, 0, 0, 0, rkey, buffer.mr().address() + slot, null, 0);
        for (PerftestLane l : lanes) {
            l.peerKeys(target);
        }
    }

    /** Closes what a {@link #loopbackEnd} owns (the exchange and the connection are not its own). */
    void closeLoopbackEnd() {
        closeRequests();
        closeQuietly(buffer != null ? buffer.mr() : null);
    }

    void connect() throws IOException, InterruptedException {
        RdmaConfig config = RdmaConfig.load().withTransport(o.transport).withDevice(o.device).withPort(o.ibPort);
        if (o.gidIndex != null) {
            config = config.withGid(Integer.toString(o.gidIndex));
        }
        if (o.rdmaCm) {
            cm = new PerftestCmSetup(this, o, out);
            cm.connect(config);
            watched = cm.first();
            List<RdmaConnection> all = cm.connections();
            QueuePair[] qps = all.stream().map(RdmaConnection::queuePair).toArray(QueuePair[]::new);
            makeLanes(qps, cm.regions(buffer.mr()));
            byte[] gid = selection.gid() != null ? selection.gid().raw() : null;
            handshakes(selection.port().lid(), gid, false);
            bindDataPath(all.subList(1, all.size()).stream().map(RdmaConnection::completionQueue).toList());
        } else {
            // Closed here when anything before the accept fails (the accept closes it otherwise).
            try (ServerSocketChannel listening = server ? PerftestTcpExchange.listen(o.port) : null) {
                connectTcp(config, listening);
            }
        }
    }

    private void connectTcp(RdmaConfig config, ServerSocketChannel listening) throws IOException {
        ownedContext = DeviceContext.open(config);
        ctx = ownedContext;
        selection = ctx.selection();
        if (ctx.transport().connectsOnlyThroughRdmaCm()) {
            throw new UsageException(ctx.device().name() + " is " + ctx.transport().displayName()
                    + ", which connects only through rdma_cm: add -R");
        }
        checkDevice(ctx);
        Port port = selection.port();
        gidIndex = selection.gidIndex();
        outReads = PerftestDevice.outstandingReads(List.of(ctx.capabilities()));
        // perftest's order: versions, system data and MTU before any resource, since they size the buffer.
        exchange = server ? PerftestTcpExchange.accept(listening, o.port, SETUP_TIMEOUT, out)
                : PerftestTcpExchange.connect(o.server, o.port, SETUP_TIMEOUT);
        agree(port.activeMtu());
        warmUpLocally(ctx);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        // perftest's: one CQ for all the QPs, deep enough for each one's window (receives: send_bw, one QP only).
        cq = ctx.createCompletionQueue(o.numQps * o.txDepth + o.rxDepth() + 16);
        QueuePair[] qps = new QueuePair[o.numQps];
        for (int i = 0; i < qps.length; i++) {
            qps[i] = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(o.txDepth + 2, o.rxDepth())
                    .withInline(o.inline()).withSignalAll(false));
            qps[i].toInit(o.ibPort, remoteAccess());
        }
        allocate(pd, qps[0]);
        makeLanes(qps, null);
        handshakes(port.lid(), gidIndex >= 0 ? selection.gid().raw() : null, true);
        bindDataPath(List.of());
    }

    /**
     * One thread owns a run, so its posts and polls go through objects bound to it: the QPs and CQs cannot
     * close under them, and no call pays the shared arena's atomic acquire. Closing the link releases them
     * first. {@code moreCqs}: with -R, the CQs of the connections after the first.
     */
    private void bindDataPath(List<CompletionQueue> moreCqs) {
        for (PerftestLane l : lanes) {
            l.bind(l.qp() == lanes[0].qp() && l != lanes[0] ? lanes[0].poster() : null);
        }
        cqs = new PerftestPath.Cq[1 + moreCqs.size()];
        cqs[0] = new PerftestPath.Cq(cq.confinedPoller(), cq.newBatch(16));
        for (int i = 1; i < cqs.length; i++) {
            CompletionQueue c = moreCqs.get(i - 1);
            cqs[i] = new PerftestPath.Cq(c.confinedPoller(), c.newBatch(16));
        }
    }

    /** One lane per QP, each with its data request; {@code mrs} the region as each QP's PD knows it (null: the buffer's). */
    private void makeLanes(QueuePair[] qps, List<MemoryRegion> mrs) throws RdmaException {
        lanes = new PerftestLane[qps.length];
        for (int i = 0; i < qps.length; i++) {
            lanes[i] = new PerftestLane(qps[i], mrs == null ? buffer.mr() : mrs.get(i), qps[i].newSendRequest(1, 1));
        }
    }

    void checkDevice(DeviceContext c) {
        PerftestDevice.check(o.test, c);
    }

    Access[] remoteAccess() {
        return PerftestDevice.remoteAccess(ctx);
    }

    /** The buffer and lane 0's other requests; the warm-up runs as many rounds as the JIT needs, open-ended as -D. */
    private void allocate(ProtectionDomain pd, QueuePair qp) throws RdmaException {
        long total = o.duration != null || warmup() || loopback ? Long.MAX_VALUE : (long) o.iters * o.sizes().length;
        buffer = new PerftestBuffer(pd, qp, slot, remoteAccess(), o.test.verb == Verb.SEND, total, o.rxDepth());
    }

    /** -R: the test's first connection is up; its QP is lane 0's (the link's resources are set up on it). */
    void setUpOn(RdmaConnection connection) throws RdmaException {
        ctx = connection.context();
        checkDevice(ctx);
        selection = ctx.selection();
        gidIndex = Math.max(0, selection.gidIndex());
        cq = connection.completionQueue();
        allocate(connection.protectionDomain(), connection.queuePair());
    }

    /** -R: the first connection's connect failed: what {@link #setUpOn} made on it goes (it is retried). */
    void abandonFirst() {
        closeQuietly(buffer);
        buffer = null;
    }

    /** -R: the exchange, on its own connection; the link closes it. */
    void exchange(PerftestExchange x) {
        exchange = x;
    }

    /** -R: the exchange's connection is up; the blocks before any resource. */
    void exchangeUp(RdmaConnection comm) throws IOException {
        agree(comm.context().selection().port().activeMtu());
        warmUpLocally(comm.context());
    }

    void outReads(int n) {
        outReads = n;
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

    /** perftest's version, system-data and MTU blocks; the buffer's size depends on them. */
    private void agree(int activeMtuBytes) throws IOException {
        PerftestExchange.Agreed a = exchange.agree(PerftestWire.VERSION, activeMtuBytes, SETUP_TIMEOUT);
        nativePeer = a.nativePeer();
        // The peer writes and reads anywhere in one cycle buffer (perftest's bandwidth loops step through it).
        slot = Math.max(slot, a.cycleBuffer());
        mtuBytes = a.mtuBytes();
    }

    /**
     * The test's handshakes before its run, after our QPs and buffer exist: the first gives the peer's QP
     * addresses (and, without -R, lets us connect our QPs); the last says that both sides' QPs are at RTS.
     * A Java peer also checks our parameters first.
     */
    private void handshakes(int lid, byte[] gid, boolean connectQps) throws IOException {
        // perftest's send_bw on iWARP advertises its receive-credit word instead of its buffer (a Send needs no
        // address); the peer writes its count of our Sends there, and we write ours to the peer's.
        long target = buffer.mr().address() + slot;
        long vaddr = nativeCredits() ? target + slot + PerftestControl.CTRL_CREDIT : target;
        SecureRandom random = new SecureRandom();
        for (PerftestLane l : lanes) {
            l.keys(new PerftestKeys(lid, outReads, l.qp().qpNumber(), random.nextInt(1 << 24), l.mr().rkey(), vaddr,
                    gid, 0));
        }
        if (!nativePeer) {
            // Two Java ends also check each other's test, sizes, count and mode: a mismatch is an error, not a hang.
            PerftestWire mine = PerftestWire.of(o, slot + PerftestControl.SIZE);
            PerftestWire.decode(exchange.xchg(mine.encode(), SETUP_TIMEOUT), mine, slot + PerftestControl.SIZE);
        }
        exchange.handshakes(lanes, o.test, SETUP_TIMEOUT, () -> {
            if (connectQps && !PerftestKeys.sameGidType(gid, lanes[0].peerKeys().gid())) {
                throw new IllegalArgumentException("Found Incompatibility issue with GID types (one side IPv4-mapped, "
                        + "the other not). Please Try to use a different IP version.");
            }
            for (int i = 0; connectQps && i < lanes.length; i++) {
                lanes[i].connect(o.ibPort, gidIndex, mtuBytes);
            }
        });
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

    /** What the run's loops use; after {@link #connect} (a loopback end: after {@link #aimAt}). */
    PerftestPath path() {
        return new PerftestPath(o, server, nativePeer, nativeCredits(), warmup(), slot, buffer.mr(), buffer.ctrl(),
                buffer.credit(), buffer.recv(), lanes, cqs, buffer.postedRecvs(), buffer.totalRecvs(), exchange, watched, ctx, selection, mtuBytes, outReads, gidIndex);
    }

    /** -R: lane 0's set-up made the buffer; further connections register it again in their PDs. */
    MemorySegment mem() {
        return buffer.mr().segment();
    }

    boolean server() {
        return server;
    }

    PerftestExchange exchange() {
        return exchange;
    }

    DeviceContext context() {
        return ctx;
    }

    @Override
    public void close() {
        closeRequests();
        if (cm != null) {
            cm.closeRegions();
            cm.endConnections();
        }
        closeQuietly(exchange);
        closeQuietly(cm);
        closeQuietly(ownedContext);
    }

    /** The data path and the work requests, the later lanes first. */
    private void closeRequests() {
        if (lanes != null) {
            for (int i = lanes.length - 1; i >= 0; i--) {
                lanes[i].close();
            }
        }
        if (cqs != null) {
            for (int i = cqs.length - 1; i >= 0; i--) {
                closeQuietly(cqs[i].poller());
            }
        }
        closeQuietly(buffer);
    }

    static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // teardown after a failure: the first error is what the user sees
            }
        }
    }
}

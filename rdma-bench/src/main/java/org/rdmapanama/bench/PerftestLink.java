package org.rdmapanama.bench;

import org.rdmapanama.Access;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.CompletionBatch;
import org.rdmapanama.CompletionQueue;
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
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A perftest run's link to its peer: the RC QP, its CQ, the memory region and
 * the pre-built work requests, connected either by a {@link PerftestWire}
 * swap over TCP and our own QP transitions (no {@code -R}: InfiniBand and
 * RoCE) or by rdma_cm with the message as private data ({@code -R}, the only
 * way for iWARP). The region is {@code [0,S)} source, {@code [S,2S)} where the
 * peer writes or reads, and the {@link PerftestControl} area. The TCP
 * connection stays open, unused, until the end: its closing is how a side
 * learns that its peer died ({@link PerftestPeerWatch}), as perftest's does.
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
    /** S: the largest message, rounded up to 64. */
    final int slot;
    private final PrintStream out;

    private DeviceContext ownedContext;
    private RdmaListener listener;
    private RdmaConnection connection;
    /** The set-up TCP connection (no -R), kept open so that its closing tells that the peer is gone. */
    private SocketChannel tcp;
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
    CompletionBatch batch;
    PerftestWire mine;
    PerftestWire peer;
    int outReads;
    int gidIndex;
    /** Receives posted during set-up, and how many the whole run takes (open-ended with -D or a warm-up). */
    long postedRecvs;
    long totalRecvs;

    PerftestLink(PerftestOptions o, PrintStream out) {
        this.o = o;
        this.out = out;
        this.server = o.isServer();
        this.slot = (Math.max(o.maxSize(), 8) + 63) & ~63;
    }

    void connect() throws IOException, InterruptedException {
        RdmaConfig config = RdmaConfig.load().withTransport(o.transport).withDevice(o.device).withPort(o.ibPort);
        if (o.gidIndex != null) {
            config = config.withGid(Integer.toString(o.gidIndex));
        }
        batch = new CompletionBatch(16);
        if (o.rdmaCm) {
            connectCm(config);
        } else {
            connectOob(config);
        }
    }

    /** Watches for the peer going away during the run; after {@link #connect}. */
    PerftestPeerWatch peerWatch() {
        return new PerftestPeerWatch(tcp, connection, qp);
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
            totalRecvs = o.duration != null || o.warmup() ? Long.MAX_VALUE : (long) o.iters * sizes;
            long first = Math.min(o.rxDepth(), totalRecvs);
            for (long i = 0; i < first; i++) {
                qp.postRecv(recv);
            }
            postedRecvs = first;
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
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        cq = ctx.createCompletionQueue(o.txDepth + o.rxDepth() + 16);
        qp = pd.createQueuePair(QueuePairConfig.rc(cq).withQueueDepth(o.txDepth + 2, o.rxDepth())
                .withInline(o.inline()).withSignalAll(false));
        qp.toInit(o.ibPort, remoteAccess());
        allocate(pd);
        byte[] gid = gidIndex >= 0 ? selection.gid().raw() : new byte[16];
        mine = describe(port.lid(), gid);
        if (server) {
            oobServer(port.activeMtu());
        } else {
            oobClient(port.activeMtu());
        }
    }

    private void oobServer(int mtu) throws IOException {
        int timeout = (int) SETUP_TIMEOUT.toMillis();
        // Channels, so that the kept connection can be read without blocking during the run.
        try (ServerSocketChannel ssc = ServerSocketChannel.open()) {
            ssc.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            ssc.bind(new InetSocketAddress(o.port));
            ServerSocket ss = ssc.socket();
            ss.setSoTimeout(timeout);
            PerftestHeader.waiting(out);
            Socket s = ss.accept();
            tcp = s.getChannel(); // closed by close(), after the run
            s.setSoTimeout(timeout);
            peer = decode(read(s.getInputStream(), PerftestWire.SIZE, "client"));
            connectQp(mtu);
            s.getOutputStream().write(mine.encode());
            s.getOutputStream().flush();
            // The client's QP is at RTS once it says so: only then may we write to it.
            byte[] ready = read(s.getInputStream(), 1, "client");
            if (ready[0] != 'R') {
                throw new IllegalArgumentException("client sent 0x" + Integer.toHexString(ready[0] & 0xff)
                        + " instead of its ready byte");
            }
            tcp.configureBlocking(false);
        } catch (SocketTimeoutException e) {
            throw new RdmaException("no client connected to TCP port " + o.port + " within "
                    + SETUP_TIMEOUT.toSeconds() + " s", e);
        }
    }

    private void oobClient(int mtu) throws IOException {
        int timeout = (int) SETUP_TIMEOUT.toMillis();
        tcp = SocketChannel.open();
        try {
            Socket s = tcp.socket();
            s.connect(new InetSocketAddress(InetAddress.getByName(o.server), o.port), timeout);
            s.setSoTimeout(timeout);
            s.getOutputStream().write(mine.encode());
            s.getOutputStream().flush();
            peer = decode(read(s.getInputStream(), PerftestWire.SIZE, "server"));
            connectQp(mtu);
            s.getOutputStream().write('R');
            s.getOutputStream().flush();
            tcp.configureBlocking(false);
        } catch (SocketTimeoutException e) {
            throw new RdmaException("the setup exchange with " + o.server + ":" + o.port + " timed out after "
                    + SETUP_TIMEOUT.toSeconds() + " s", e);
        } catch (java.net.ConnectException e) {
            throw new RdmaException("couldn't connect to " + o.server + ":" + o.port + " (" + e.getMessage()
                    + "): is the server running?", e);
        }
    }

    private void connectQp(int mtu) throws RdmaException {
        QpAddress remote = new QpAddress(peer.lid(), peer.qpn(), peer.psn(), peer.gid());
        qp.toRtr(remote, o.ibPort, remote.hasGid() ? gidIndex : -1, mtu);
        qp.toRts(mine.psn());
    }

    private static byte[] read(InputStream in, int n, String who) throws IOException {
        byte[] b = new byte[n];
        int got = in.readNBytes(b, 0, n);
        if (got != n) {
            throw new RdmaException("the " + who + " closed the setup connection after " + got + " of " + n
                    + " bytes (is it rdma-bench with the same subcommand and flags?)");
        }
        return b;
    }

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
        if (server) {
            InetSocketAddress at = local != null ? new InetSocketAddress(local, o.port) : new InetSocketAddress(o.port);
            listener = RdmaListener.bind(at, 1, opts);
            PerftestHeader.waiting(out);
            connection = listener.accept(SETUP_TIMEOUT);
            if (connection == null) {
                throw new RdmaException("no client connected through rdma_cm to " + at + " within "
                        + SETUP_TIMEOUT.toSeconds() + " s");
            }
            setUpOnConnection();
            try {
                peer = decode(connection.peerPrivateData());
            } catch (IllegalArgumentException e) {
                connection.reject(new byte[0]);
                throw e;
            }
            connection.accept(mine.encode(), SETUP_TIMEOUT);
        } else {
            InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(o.server), o.port);
            connection = RdmaConnection.resolve(to, local == null ? null : new InetSocketAddress(local, 0), opts,
                    SETUP_TIMEOUT);
            setUpOnConnection();
            connection.connect(mine.encode(), SETUP_TIMEOUT);
            peer = decode(connection.peerPrivateData());
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
        for (AutoCloseable c : new AutoCloseable[] {data, ctrl, credit, recv, batch}) {
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
        closeQuietly(tcp);
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
